/**
 * Where a poller keeps a credential the CRM issued in place of a configured one: Salesforce, with refresh-token
 * rotation, answers every refresh with a new refresh token and invalidates the one sent. The scheduler backs it with
 * the poller's row in crm_poll_state, so the newest token survives restarts and every instance reads the same one.
 *
 * `basis` names the configured credential the stored one descends from (a hash, never the secret: `tokenCacheKey`).
 * A stored value is only returned for the same basis, so an operator who pastes a new credential starts from it.
 */
export interface CrmCredentialStore {
  /** The newest credential issued for this basis, or null when none was stored (or it descends from another). */
  get: (basis: string) => Promise<string | null>
  /** Keeps `value` as the newest credential for this basis, replacing any other. */
  set: (basis: string, value: string) => Promise<void>
}

declare module '../../../core/registry.ts' {
  interface CrmPollContext {
    /** Set by the scheduler; absent in a bare poll (tests, tools), where an issued credential is not kept. */
    credentials?: CrmCredentialStore
  }
}
