import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { definePlugin } from '../../core/plugin.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

const echo = definePlugin({
  name: 'echo',
  setup({ routes }) {
    routes.add({
      method: 'POST', path: '/echo/:id', auth: 'none', summary: 'Echo', tags: ['Test'],
      params: v.object({ id: v.pipe(v.string(), v.regex(/^\d+$/, 'must be digits')) }),
      query: v.object({ verbose: v.optional(v.picklist(['1', '0'])) }),
      body: v.object({ email: v.pipe(v.string(), v.email('must be an email address')), count: v.optional(v.number()) }),
      responses: { 200: v.object({ id: v.string(), email: v.string() }) },
      handler: (_event, { params, body }) => ({ id: params.id, email: body.email }),
    })
  },
})

let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({ plugins: ['export', echo], server: { bodyLimit: 4096 } })
})
afterAll(() => app?.close())

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  app.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })

describe('input validation', () => {
  it('passes valid input to the handler', async () => {
    const response = await post('/echo/42?verbose=1', JSON.stringify({ email: 'a@b.co' }))
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ id: '42', email: 'a@b.co' })
  })

  it('answers 400 naming each invalid field, without echoing the input', async () => {
    const response = await post('/echo/x?verbose=2', JSON.stringify({ email: 'not-an-email-secret', count: 'three' }))
    expect(response.status).toBe(400)
    const body = await response.json() as { message: string, errors: string[] }
    expect(body.errors).toEqual(['params.id: must be digits'])
    expect(JSON.stringify(body)).not.toContain('not-an-email-secret')

    const bodyErrors = await (await post('/echo/1', JSON.stringify({ email: 'not-an-email-secret', count: 'three' }))).json() as { errors: string[] }
    expect(bodyErrors.errors).toEqual([expect.stringMatching(/^email: must be an email address/), expect.stringMatching(/^count: /)])
    expect(JSON.stringify(bodyErrors)).not.toContain('not-an-email-secret')
  })

  it('answers 400 for malformed JSON, a missing body and a non-object body', async () => {
    for (const raw of ['{"email":', '', '[]', '"text"', 'null']) {
      const response = await post('/echo/1', raw)
      expect(response.status, raw).toBe(400)
      expect(await response.json(), raw).toMatchObject({ message: expect.any(String) })
    }
  })

  it('answers 413 for a body over the configured limit, declared or streamed', async () => {
    const big = JSON.stringify({ email: 'a@b.co', pad: 'x'.repeat(5000) })
    const declared = await post('/echo/1', big)
    expect(declared.status).toBe(413)
    expect(await declared.json()).toEqual({ message: expect.stringContaining('4096') })
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(big)); c.close() } })
    const streamed = await app.request('/echo/1', { method: 'POST', body: stream, duplex: 'half', headers: { 'content-type': 'application/json' } } as RequestInit)
    expect(streamed.status).toBe(413)
  })

  it('answers unknown routes with a JSON 404', async () => {
    const response = await app.request('/nope')
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ message: expect.stringContaining('/nope') })
  })
})

describe('API reference', () => {
  it('GET /openapi.json describes every declared route with its schemas and auth', async () => {
    const doc = await (await app.request('/openapi.json')).json() as { openapi: string, paths: Record<string, Record<string, any>> }
    expect(doc.openapi).toBe('3.1.0')
    const health = doc.paths['/api/v1/export/health']!.get
    expect(health.security).toEqual([{ privateKey: [] }])
    expect(health.responses['200'].content['application/json'].schema.properties).toHaveProperty('identified_user_count')
    expect(health.responses['401']).toBeDefined()
    const echoOp = doc.paths['/echo/{id}']!.post
    expect(echoOp.parameters).toEqual(expect.arrayContaining([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
      expect.objectContaining({ name: 'verbose', in: 'query', required: false }),
    ]))
    expect(echoOp.requestBody.content['application/json'].schema.required).toEqual(['email'])
    expect(doc.paths['/admin/api/sites/{id}/keys']!.post.security).toEqual([{ adminToken: [] }])
  })

  it('GET /docs serves the reference page and its script from this server, no CDN', async () => {
    const page = await (await app.request('/docs')).text()
    expect(page).toContain('/docs/scalar.js')
    expect(page).toContain('/openapi.json')
    expect(page).not.toMatch(/https?:\/\//)
    const script = await app.request('/docs/scalar.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('javascript')
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000)
    const revalidated = await app.request('/docs/scalar.js', { headers: { 'if-none-match': script.headers.get('etag')! } })
    expect(revalidated.status).toBe(304)
  })
})

describe('admin API access', () => {
  it('needs the admin token', async () => {
    expect((await app.request('/admin/api/sites')).status).toBe(401)
    const wrong = await app.request('/admin/api/sites', { headers: { authorization: 'Bearer wrong-token-wrong-token' } })
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toEqual({ message: 'Missing or wrong admin token' })
    expect((await app.admin('GET', '/sites')).status).toBe(200)
  })

  it('refuses requests relayed from elsewhere, even with the token', async () => {
    const relayed = await app.request('/admin/api/sites', { headers: { 'authorization': `Bearer ${app.dcgate.adminToken}`, 'x-forwarded-for': '203.0.113.9' } })
    expect(relayed.status).toBe(403)
  })
})
