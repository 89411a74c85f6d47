import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHUNKS } from '../../plugins/capture/script.ts'
import { bootTestApp, type TestApp } from '../helpers/app.ts'

// GET /script and its chunks as a browser gets them (issue 30): the main part within 4,096 bytes gzipped for a
// visitor who needs no banner and no form code, measured on the bytes served for `Accept-Encoding: gzip`; the banner's
// words and the mapped forms only in their chunks; brotli where asked; one cacheable answer per encoding.
const MAIN_GZIP_BUDGET = 4096

let app: TestApp
let copKey: string

beforeAll(async () => {
  app = await bootTestApp({
    plugins: ['capture'],
    sites: [{
      id: 'shop', name: 'Shop',
      consent: { banner: 'eu', text: { de: { message: 'Diese Seite misst Besuche. Einverstanden?', accept: 'Zustimmen', reject: 'Ablehnen' } } },
      capture: { forms: [{ selector: '#signup', emailField: 'email', firstNameField: 'first_name' }] },
    }],
  })
  copKey = app.dcgate.context.sites.byId('shop')!.copKey
})
afterAll(async () => {
  await app?.close()
})

const get = (path: string, encoding?: string, headers: Record<string, string> = {}) =>
  app.request(path, { headers: { ...(encoding === undefined ? {} : { 'accept-encoding': encoding }), ...headers } })

describe('the main part', () => {
  it(`is within ${MAIN_GZIP_BUDGET} bytes gzipped as served, and carries neither the banner's words nor the forms`, async () => {
    const response = await get(`/script?cop_key=${copKey}`, 'gzip, deflate')
    expect(response.headers.get('content-encoding')).toBe('gzip')
    const served = Buffer.from(await response.arrayBuffer())
    console.log(`GET /script, gzip: ${served.length} bytes served (budget ${MAIN_GZIP_BUDGET})`)
    expect(served.length).toBeLessThanOrEqual(MAIN_GZIP_BUDGET)
    const code = gunzipSync(served).toString()
    expect(code).not.toContain('Einverstanden')
    expect(code).not.toContain('#signup')
    expect(code).not.toMatch(/<script|eval\(|new Function/) // nothing a `script-src 'self'` policy would refuse
  })

  it('is brotli where asked, gzip otherwise, plain without either; each with Vary, caching headers and one ETag', async () => {
    const brotli = await get(`/script?cop_key=${copKey}`, 'gzip, deflate, br, zstd')
    const gzip = await get(`/script?cop_key=${copKey}`, 'gzip')
    const refused = await get(`/script?cop_key=${copKey}`, 'br;q=0, gzip;q=0.8')
    const plain = await get(`/script?cop_key=${copKey}`)
    expect([brotli, gzip, refused, plain].map((r) => r.headers.get('content-encoding'))).toEqual(['br', 'gzip', 'gzip', null])
    const body = await plain.text()
    expect(brotliDecompressSync(Buffer.from(await brotli.arrayBuffer())).toString()).toBe(body)
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).toString()).toBe(body)
    for (const response of [brotli, gzip, plain]) {
      expect(response.headers.get('vary')).toBe('Accept-Encoding')
      expect(response.headers.get('cache-control')).toBe('public, max-age=86400, stale-while-revalidate=604800')
      expect(response.headers.get('etag')).toBe(plain.headers.get('etag'))
    }
    expect((await get(`/script?cop_key=${copKey}`, 'br', { 'if-none-match': plain.headers.get('etag')! })).status).toBe(304)
  })
})

describe('the chunks', () => {
  it("are served with the script's cop_key: the banner with the site's words, the forms with the site's forms", async () => {
    const banner = await (await get(`/script/banner?cop_key=${copKey}`)).text()
    expect(banner).toContain('Einverstanden')
    const forms = await (await get(`/script/forms?cop_key=${copKey}`)).text()
    expect(forms).toContain('"selector":"#signup"')
    // A main script rendered before chunks took the key asks without it: the chunk without site data.
    expect(await (await get('/script/banner')).text()).not.toContain('Einverstanden')
  })

  it('are cached like the script, compressed where asked, and 404 as a JavaScript comment for an unknown key', async () => {
    for (const name of Object.keys(CHUNKS)) {
      const response = await get(`/script/${name}?cop_key=${copKey}`, 'br')
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8')
      expect(response.headers.get('content-encoding')).toBe('br')
      expect(response.headers.get('vary')).toBe('Accept-Encoding')
      expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{43}"$/)
      const unknown = await get(`/script/${name}?cop_key=cop_nope`)
      expect(unknown.status).toBe(404)
      expect(unknown.headers.get('cache-control')).toBe('no-store')
      expect(await unknown.text()).toMatch(/^\/\* dcgate: unknown cop_key/)
    }
  })
})
