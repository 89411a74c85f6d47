import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
import { bootDsarApp, sql } from './support.ts'

// POST /api/v1/data-deletion: the site owner's systems erase a person at once; the proof lives on the status host.
let app: TestApp
let key: string

beforeAll(async () => {
  app = await bootDsarApp(undefined, { server: { trustProxy: true, baseUrl: 'https://track.shop.example', statusBaseUrl: 'https://privacy.shop.example/' } })
  key = await app.createKey('closed')
})
afterAll(async () => {
  await app?.close()
})

const erase = (body: unknown, headers: Record<string, string> = { 'x-dc-key': key }) => app.request('/api/v1/data-deletion', {
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
})

describe('POST /api/v1/data-deletion', () => {
  it('erases during the call and answers the confirmation code and a status URL on server.statusBaseUrl (even where public requests are off)', async () => {
    const response = await erase({ email: 'nobody@example.com' })
    expect(response.status).toBe(200)
    const body = await response.json() as { confirmation_code: string, status_url: string }
    expect(body).toEqual({
      success: true, accepted: true, confirmation_code: expect.any(String), session_records_anonymised: 0,
      status_url: `https://privacy.shop.example/public/dsar/status/${body.confirmation_code}`,
    })
    const proof = await (await app.request(`/public/dsar/proof/${body.confirmation_code}`)).json()
    expect(proof).toEqual({
      status: 'completed', maskedEmail: 'n***@e***.com', received_at: expect.any(String), completed_at: expect.any(String),
      hard_purge_at: expect.any(String), integrations_affected: 0, session_records_anonymised: 0, completion_email_sent_at: null,
      merchant_log: [
        { at: expect.any(String), event: 'request_received', detail: 'private API (x-dc-key)' },
        { at: expect.any(String), event: 'erasure_started' },
        { at: expect.any(String), event: 'erasure_completed', detail: 'no data of this email was held' },
      ],
    })
    // The email is not kept once erased; no completion mail goes out on this route.
    expect(await sql(app, 'select site_id, source, email, email_key, token_hash from deletion_requests where code = $1', [body.confirmation_code])).toEqual([
      { site_id: 'closed', source: 'api', email: null, email_key: null, token_hash: null },
    ])
  })

  it('400 for an invalid email, 401 without a valid key', async () => {
    const hostile = ['victim@example.com,root', '"Support" <victim@example.com>', 'victim@example.com <root@example.com>', 'vic tim@example.com']
    for (const body of [{}, { email: 'nope' }, { email: ['a@example.com'] }, ...hostile.map((email) => ({ email }))]) {
      const response = await erase(body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(await response.json()).toEqual({ success: false, message: 'Invalid email', errors: [expect.stringMatching(/^email: must be one email address/)] })
    }
    expect((await erase({ email: 'a@example.com' }, {})).status).toBe(401)
    expect(await (await erase({ email: 'a@example.com' }, {})).json()).toEqual({ message: 'Missing x-dc-key header' })
    expect(await (await erase({ email: 'a@example.com' }, { 'x-dc-key': 'dcp_wrong' })).json()).toEqual({ message: 'Invalid API key' })
  })

  it('the status page answers on the status host', async () => {
    const { confirmation_code: code } = await (await erase({ email: 'page@example.com' })).json() as { confirmation_code: string }
    const page = await app.request(`https://privacy.shop.example/public/dsar/status/${code}`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('Data deletion request at No deletions')
  })

  it('every deletion route is in the API reference', async () => {
    const document = await (await app.request('/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> }
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining([
      '/api/v1/data-deletion', '/public/data-deletion/request', '/public/dsar/confirm', '/public/dsar/proof/{code}', '/public/dsar/status/{code}', '/dsar-embed.js',
    ]))
  })
})
