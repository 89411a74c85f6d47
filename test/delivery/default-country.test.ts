import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sha256Hex } from '../../core/identity/hash.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// A national phone number ("030 1234567") can only be matched in a country: the conversion's own, else the site's
// defaultCountry. Without either it is left out rather than hashed wrong.
let app: TestApp
const keys: Record<string, string> = {}

beforeAll(async () => {
  app = await bootTestApp({
    plugins: ['intake'],
    sites: [{ id: 'berlin', name: 'Berlin shop', defaultCountry: 'DE' }, { id: 'nowhere', name: 'No country' }],
  })
  keys.berlin = await app.createKey('berlin')
  keys.nowhere = await app.createKey('nowhere')
})
afterAll(async () => {
  await app?.close()
})

async function storedIdentity(site: string, messageId: string, traits: Record<string, unknown>): Promise<Record<string, string>> {
  const response = await app.request('/api/v1/conversions/automation', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dc-key': keys[site]! },
    body: JSON.stringify({ event: 'Lead', messageId, context: { traits } }),
  })
  expect(response.status).toBe(202)
  const [row] = await app.dcgate.database.orm.em.getConnection().execute<{ identity: Record<string, string> }[]>(
    'select identity from conversions where site_id = ? and message_id = ?', [site, messageId],
  )
  return row!.identity
}

describe('sites[].defaultCountry', () => {
  it('reads a national phone number in the site\'s country', async () => {
    const identity = await storedIdentity('berlin', 'de-1', { email: 'a@example.com', phone: '030 1234567' })
    expect(identity.phoneE164).toBe(sha256Hex('+49301234567'))
  })

  it('prefers the conversion\'s own country', async () => {
    const identity = await storedIdentity('berlin', 'de-2', { email: 'a@example.com', phone: '(650) 555-1212', country: 'US' })
    expect(identity.phoneE164).toBe(sha256Hex('+16505551212'))
  })

  it('leaves a national number out on a site without one', async () => {
    const identity = await storedIdentity('nowhere', 'none-1', { email: 'a@example.com', phone: '030 1234567' })
    expect(identity).not.toHaveProperty('phoneE164')
    expect(identity.email).toBe(sha256Hex('a@example.com'))
  })

  it('is checked at start-up with its path', () => {
    expect(resolveConfig({ sites: [{ id: 'a', name: 'A', defaultCountry: 'Germany' }] }, {}).sites[0]!.defaultCountry).toBe('Germany')
    try {
      resolveConfig({ sites: [{ id: 'a', name: 'A', defaultCountry: 'Atlantis' }] }, {})
      expect.unreachable('Atlantis is no country')
    }
    catch (error) {
      expect((error as BootError).details).toEqual(['sites[0].defaultCountry: must be a country code such as DE, or a country name'])
    }
  })
})
