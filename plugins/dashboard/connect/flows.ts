/**
 * The Connect flow's short-lived state in the shared storage (Redis when configured, so any instance may answer the
 * callback): the OAuth `state` (single use, 10 minutes) with its PKCE verifier, then the grant until the owner picks
 * an account (30 minutes), sealed with the keyring. Both bound to the dashboard session that started them: the
 * storage keys are hashes of the random values, so the storage never holds a value that would finish a flow.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { Storage } from 'unstorage'
import type { Keyring } from '../../../core/secrets/keyring.ts'
import type { Grant } from './types.ts'

const STATE_SECONDS = 600
const GRANT_SECONDS = 1800

export interface PendingState {
  /** The storage key of the dashboard session that pressed Connect. */
  sessionKey: string
  siteId: string
  platform: string
  verifier?: string
  expiresAt: number
}

export interface PendingGrant {
  sessionKey: string
  siteId: string
  platform: string
  expiresAt: number
  /** The Grant as JSON, sealed (platform-credential) to this flow's key. */
  sealed: string
}

const hash = (value: string) => createHash('sha256').update(value).digest('hex')
const stateKey = (state: string) => `connect:state:${hash(state)}`
const grantKey = (flow: string) => `connect:grant:${hash(flow)}`
const random = () => randomBytes(32).toString('base64url')

/** PKCE (RFC 7636): a random verifier and its S256 challenge. */
export function pkcePair(): { verifier: string, challenge: string } {
  const verifier = random()
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

export function createFlows(storage: Storage, keyring: Keyring) {
  return {
    /** A new state for this session and site; the PKCE verifier is kept with it when the vendor takes one. */
    async begin(input: { sessionKey: string, siteId: string, platform: string, pkce: boolean }) {
      const state = random()
      const pair = input.pkce ? pkcePair() : undefined
      const pending: PendingState = {
        sessionKey: input.sessionKey, siteId: input.siteId, platform: input.platform, expiresAt: Date.now() + STATE_SECONDS * 1000,
        ...(pair ? { verifier: pair.verifier } : {}),
      }
      await storage.setItem(stateKey(state), pending, { ttl: STATE_SECONDS })
      return { state, challenge: pair?.challenge }
    },

    /** The state's flow, once: it is removed as it is read, so a replayed callback finds nothing. */
    async take(state: string, platform: string): Promise<PendingState | undefined> {
      if (!/^[\w-]{43}$/.test(state)) return undefined
      const key = stateKey(state)
      const pending = await storage.getItem<PendingState>(key)
      if (!pending) return undefined
      await storage.removeItem(key)
      return pending.expiresAt > Date.now() && pending.platform === platform ? pending : undefined
    },

    /** Keeps the grant, sealed, until the owner picks; returns the flow id the pick page is opened with. */
    async hold(from: Omit<PendingState, 'verifier' | 'expiresAt'>, grant: Grant): Promise<string> {
      const flow = random()
      const held: PendingGrant = {
        sessionKey: from.sessionKey, siteId: from.siteId, platform: from.platform, expiresAt: Date.now() + GRANT_SECONDS * 1000,
        sealed: keyring.seal('platform-credential', JSON.stringify(grant), grantKey(flow)),
      }
      await storage.setItem(grantKey(flow), held, { ttl: GRANT_SECONDS })
      return flow
    },

    /** The held grant of this session's flow, or undefined (another session's, expired, or already used). */
    async held(flow: string, sessionKey: string, platform: string): Promise<{ siteId: string, grant: Grant } | undefined> {
      if (!/^[\w-]{43}$/.test(flow)) return undefined
      const held = await storage.getItem<PendingGrant>(grantKey(flow))
      if (!held || held.expiresAt <= Date.now() || held.sessionKey !== sessionKey || held.platform !== platform) return undefined
      const plain = keyring.open('platform-credential', held.sealed, grantKey(flow))
      return plain ? { siteId: held.siteId, grant: JSON.parse(plain) as Grant } : undefined
    },

    /** Ends the flow once its destination is connected. */
    async finish(flow: string): Promise<void> {
      await storage.removeItem(grantKey(flow))
    },
  }
}

export type Flows = ReturnType<typeof createFlows>
