import { readdirSync, readFileSync } from 'node:fs'
import { gunzipSync, brotliDecompressSync, gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { buildClientBundle, renderChunk, renderScript, SETTINGS_PLACEHOLDER } from '../../plugins/capture/script.ts'

const MAX_GZIP_BYTES = 4096
/** Live esbuild processes whose parent is this process (the test runner may have one of its own for transforms). */
function esbuildChildren(): string[] {
  return readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const [state, parent] = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
      // A stopped service is a zombie (state Z) until Node reaps it: it holds no memory.
      return parent === String(process.pid) && state !== 'Z' && stat.includes('(esbuild)')
    }
    catch {
      return false // exited meanwhile
    }
  })
}
const esbuildBefore = esbuildChildren()
const bundle = await buildClientBundle()
const gzipped = gzipSync(bundle, { level: 9 }).length
console.log(`tracking script: ${bundle.length} bytes minified, ${gzipped} bytes gzipped (budget ${MAX_GZIP_BYTES})`)

describe('the tracking script bundle', () => {
  it('is one minified IIFE built once per process', async () => {
    expect(bundle).toMatch(/^"use strict";\(\(\)=>\{/)
    expect(bundle.trimEnd()).toMatch(/\}\)\(\);$/)
    expect(bundle.split('\n').length).toBeLessThanOrEqual(2)
    expect(await buildClientBundle()).toBe(bundle)
  })

  it('leaves no esbuild service running once built (a process of its own, tens of MB)', () => {
    expect(esbuildChildren()).toEqual(esbuildBefore)
  })

  it(`is ${gzipped} bytes gzipped, within ${MAX_GZIP_BYTES}`, () => {
    expect(gzipped).toBeLessThanOrEqual(MAX_GZIP_BYTES)
  })

  it('carries no library code and no imports: only the protocol types were used', () => {
    expect(bundle).not.toMatch(/valibot|ValiError|require\(|import\(/)
    expect(bundle.split(SETTINGS_PLACEHOLDER)).toHaveLength(2)
  })
})

describe('renderScript', () => {
  const forms = [{ selector: '#signup', emailField: 'email', phoneField: 'tel' }]

  it('injects the site settings in place of the placeholder: the main script says whether forms are mapped, their chunk has them', async () => {
    const script = await renderScript({ forms, banner: 'always' })
    expect(script.body).not.toContain(SETTINGS_PLACEHOLDER)
    expect(script.body).toContain('({"banner":"always","forms":1})')
    expect(() => new Function(script.body)).not.toThrow()
    const chunk = await renderChunk('forms', { forms, banner: 'always' })
    expect(chunk.body).toContain('({"forms":[{"selector":"#signup","emailField":"email","phoneField":"tel"}]})')
    expect(() => new Function(chunk.body)).not.toThrow()
  })

  it("puts the banner's words in the banner chunk, not in the main script", async () => {
    const bannerText = { de: { message: 'Diese Seite misst Besuche.', accept: 'Ja', reject: 'Nein' } }
    expect((await renderScript({ forms: [], banner: 'eu', bannerText })).body).not.toContain('Diese Seite')
    expect((await renderChunk('banner', { forms: [], banner: 'eu', bannerText })).body).toContain('({"bannerText":{"de":{"message":"Diese Seite misst Besuche.","accept":"Ja","reject":"Nein"}}})')
    expect((await renderChunk('banner')).body).toContain('({})')
  })

  it('gives precompressed forms of the same body', async () => {
    const script = await renderScript({ forms: [], banner: 'eu' })
    expect(gunzipSync(script.gzip).toString()).toBe(script.body)
    expect(brotliDecompressSync(script.brotli).toString()).toBe(script.body)
    expect(script.brotli.length).toBeLessThan(script.gzip.length)
  })

  it('gives a stable strong ETag that changes with the settings', async () => {
    const first = await renderScript({ forms, banner: 'eu' })
    const again = await renderScript({ forms: [{ ...forms[0]! }], banner: 'eu' })
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/)
    expect(again).toBe(first)
    expect((await renderScript({ forms, banner: 'off' })).etag).not.toBe(first.etag)
    expect((await renderScript({ forms: [], banner: 'eu' })).etag).not.toBe(first.etag)
  })

  it('injects only forms and banner, whatever else the settings object carries', async () => {
    const settings = { forms: [], banner: 'off' as const, copKey: 'ck_secret', host: 'https://t.example' }
    const script = await renderScript(settings)
    expect(script.body).not.toContain('ck_secret')
    expect(script).toBe(await renderScript({ forms: [], banner: 'off' }))
  })

  it('keeps $ patterns in selectors literal', async () => {
    const script = await renderChunk('forms', { forms: [{ selector: "form[data-x='$&']", emailField: "$'" }], banner: 'eu' })
    expect(script.body).toContain(`"selector":"form[data-x='$&']","emailField":"$'"`)
  })
})
