import { createConsola } from 'consola'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ErrorContext } from '../../core/hooks.ts'
import { failingPlugin } from '../helpers/failing-plugin.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// The release secret and private keys travel in URL paths (/api/v1/crm-release/<cop_key>/<secret>,
// /api/v1/conversions/<source>/<key>). Debug request lines and error reports name the route pattern, never the path.
const SECRET = 'release-secret-that-must-not-be-logged'
const lines: string[] = []
const reported: ErrorContext[] = []
let app: TestApp

const failing = failingPlugin('/test/fails/:secret', reported)

beforeAll(async () => {
  const logger = createConsola({ level: 4, reporters: [{ log: (entry) => void lines.push(entry.args.map(String).join(' ')) }] })
  app = await bootTestApp({ plugins: ['intake', 'release', failing] }, { logger })
})
afterAll(() => app?.close())

describe('paths in logs and error reports', () => {
  it('a failed request is reported by its route pattern, without the secret in its path', async () => {
    const response = await app.request(`/test/fails/${SECRET}`)
    expect(response.status).toBe(500)
    expect(reported).toContainEqual(expect.objectContaining({ source: 'request', path: '/test/fails/:secret' }))
    expect(lines).toContainEqual(expect.stringContaining('[request] /test/fails/:secret'))
    expect(JSON.stringify(reported)).not.toContain(SECRET)
    expect(lines.join('\n')).not.toContain(SECRET)
  })

  it('the debug line of every request names the route pattern: no release secret, no key', async () => {
    await app.request(`/api/v1/crm-release/cop_notarealkey000000000/${SECRET}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    await app.request(`/api/v1/conversions/zapier/dcp_${SECRET}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    await app.request(`/no/such/route/${SECRET}`)
    expect(lines).toContainEqual(expect.stringMatching(/^POST \/api\/v1\/crm-release\/:api_key\/:secret \d{3} /))
    expect(lines).toContainEqual(expect.stringMatching(/^GET \(unmatched\) 404 /))
    expect(lines.join('\n')).not.toContain(SECRET)
  })
})
