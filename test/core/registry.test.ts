import { readdirSync, existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { createRegistry, defineAdPlatform, defineCrmPoller, defineIntakeSource } from '../../core/registry.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { adapters } from '../../adapters/index.ts'

const meta = defineAdPlatform({
  name: 'meta',
  apiVersion: 'v24.0',
  options: v.object({ pixelId: v.pipe(v.string(), v.regex(/^\d+$/)), accessToken: v.string(), testEventCode: v.optional(v.string()) }),
  maxBatchSize: 1000,
  maxEventAgeDays: 7,
  toRequest: (events, options) => ({ url: `https://graph.facebook.com/v24.0/${options.pixelId}/events`, method: 'POST', headers: {}, body: JSON.stringify(events.length) }),
  parseResponse: (_response, events) => events.map(() => ({ status: 'sent' as const })),
})
const hubspot = defineCrmPoller({
  name: 'hubspot', apiVersion: 'v3', intervalSeconds: 300,
  options: v.object({ token: v.string(), stage: v.optional(v.string(), 'qualified') }),
  poll: async () => ({ qualified: [] }),
})
const shopify = defineIntakeSource({
  name: 'shopify',
  options: v.object({ secret: v.pipe(v.string(), v.minLength(8)) }),
  signature: 'required',
  confirmation: 'payment_confirmed',
  isSigned: () => true,
  verify: () => true,
  parse: () => ({ kind: 'ignored', reason: 'test' }),
})
const definitions = [meta, hubspot, shopify]

function sites(input: unknown) {
  return resolveConfig({ sites: input }, {}).sites
}

describe('registry', () => {
  it('tags each definition with its kind and finds it by kind and name', () => {
    const registry = createRegistry(definitions, [])
    expect(meta.kind).toBe('ad-platform')
    expect(registry.get('ad-platform', 'meta')).toBe(meta)
    expect(registry.get('crm-poller', 'meta')).toBeUndefined()
    expect(registry.list('intake-source')).toEqual([shopify])
  })

  it('validates each site\'s options at boot and hands out the parsed result', () => {
    const registry = createRegistry(definitions, sites([
      { id: 'a', name: 'A', destinations: { meta: { pixelId: '123', accessToken: 't' } }, crm: { hubspot: { token: 'x' } }, sources: { shopify: { secret: 'whsec-12345' } } },
      { id: 'b', name: 'B' },
    ]))
    expect(registry.forSite('a', 'ad-platform')).toEqual([{ definition: meta, options: { pixelId: '123', accessToken: 't' } }])
    expect(registry.forSite('a', 'crm-poller')[0]!.options).toEqual({ token: 'x', stage: 'qualified' })
    expect(registry.forSite('b', 'ad-platform')).toEqual([])
  })

  it('reports every bad option with its config path, without echoing values', () => {
    let error: unknown
    try {
      createRegistry(definitions, sites([
        { id: 'a', name: 'A', destinations: { meta: { accessToken: 'secret-token-value', pixelId: 'abc' } } },
        { id: 'b', name: 'B', destinations: { meta: { accessToken: 'x' }, tiktok: {} }, sources: { shopify: { secret: 'short' } } },
      ]))
    }
    catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(BootError)
    const details = (error as BootError).details
    expect(details).toEqual(expect.arrayContaining([
      expect.stringMatching(/^sites\[0\]\.destinations\.meta\.pixelId: /),
      expect.stringMatching(/^sites\[1\]\.destinations\.meta\.pixelId: /),
      expect.stringMatching(/^sites\[1\]\.destinations\.tiktok: unknown ad-platform "tiktok"; known: meta/),
      expect.stringMatching(/^sites\[1\]\.sources\.shopify\.secret: /),
    ]))
    expect(details.join('\n')).not.toContain('secret-token-value')
  })

  it('refuses two definitions of one kind with the same name', () => {
    expect(() => createRegistry([meta, { ...meta }], [])).toThrow(/Two ad-platform definitions are named "meta"/)
  })
})

describe('shipped adapters', () => {
  /** Folders that hold code the adapters share, not an adapter: exempt by name, every other folder is checked. */
  const NOT_ADAPTERS: Record<string, readonly string[]> = { crm: ['shared'] }

  // Registration is an explicit list; this fails when a folder is added but not registered. A folder's index.ts
  // default-exports its definition, or an array of them (adapters/sources/automation: zapier, make, n8n).
  it('registers every definition of every folder under adapters/ads, adapters/crm and adapters/sources', async () => {
    const root = new URL('../../adapters/', import.meta.url)
    const kinds = { ads: 'ad-platform', crm: 'crm-poller', sources: 'intake-source' } as const
    for (const [folder, kind] of Object.entries(kinds)) {
      const dir = new URL(`${folder}/`, root)
      const names = existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory() && !NOT_ADAPTERS[folder]?.includes(d.name)).map((d) => d.name) : []
      for (const name of names) {
        const exported = (await import(new URL(`${name}/index.ts`, dir).href) as { default: unknown }).default
        const definitions = (Array.isArray(exported) ? exported : [exported]) as { kind: string }[]
        expect(definitions.length, `adapters/${folder}/${name}/index.ts exports no definition`).toBeGreaterThan(0)
        for (const definition of definitions) {
          expect(definition.kind, `adapters/${folder}/${name}`).toBe(kind)
          expect(adapters.includes(definition as never), `adapters/${folder}/${name} is not in adapters/index.ts`).toBe(true)
        }
      }
    }
  })
  // Each kind's contract suite runs for every registered adapter: test/contract/registered.ts.
})
