import { describe, expect, it } from 'vitest'
import * as v from 'valibot'
import { createConsola, type LogObject } from 'consola'
import { describeSunset, findSunsetWarnings, SUNSET_WARNING_DAYS } from '../../core/api-sunsets.ts'
import { createRegistry, defineAdPlatform, defineCrmPoller, type ApiSunset } from '../../core/registry.ts'
import { resolveConfig } from '../../core/config/load.ts'
import { adapters } from '../../adapters/index.ts'
import { bootTestApp } from '../helpers/app.ts'

const DAY_MS = 86_400_000

function adPlatform(name: string, apiSunset?: ApiSunset) {
  return defineAdPlatform({
    name, apiVersion: apiSunset?.version ?? 'v1', ...(apiSunset ? { apiSunset } : {}),
    options: v.object({ token: v.string() }),
    maxBatchSize: 1,
    maxEventAgeDays: 7,
    toRequest: () => ({ url: 'https://example.invalid', method: 'POST', headers: {}, body: '' }),
    parseResponse: (_response, events) => events.map(() => ({ status: 'sent' as const })),
  })
}

function crmPoller(name: string, apiSunset: ApiSunset) {
  return defineCrmPoller({ name, apiVersion: apiSunset.version, apiSunset, intervalSeconds: 300, options: v.object({ token: v.string() }), poll: async () => ({ qualified: [] }) })
}

/** A sunset `days` from `now`, as a vendor would publish it (a calendar day). */
function sunsetIn(days: number, now: Date, version = 'v7'): ApiSunset {
  return { version, date: new Date(now.getTime() + days * DAY_MS).toISOString().slice(0, 10), source: 'https://vendor.example/versions' }
}

describe('vendor API sunsets (a clock the test sets)', () => {
  const now = new Date('2031-03-10T12:00:00Z')
  const definitions = [
    adPlatform('soon', { version: 'v7', date: '2031-04-30', source: 'https://soon.example/versions' }),
    adPlatform('later', { version: '2031-01', date: '2031-05-15', source: 'https://later.example/versions' }),
    adPlatform('gone', { version: 'v2', date: '2031-03-01', source: 'https://gone.example/versions' }),
    adPlatform('undated'),
    crmPoller('crm', { version: '2030-09', date: '2031-03-31', source: 'https://crm.example/versions' }),
  ]
  const sites = resolveConfig({
    sites: [
      { id: 'shop', name: 'Shop', destinations: { soon: { token: 't' }, later: { token: 't' }, undated: { token: 't' } }, crm: { crm: { token: 't' } } },
      { id: 'blog', name: 'Blog', destinations: { soon: { token: 't' }, gone: { token: 't' } } },
      { id: 'idle', name: 'Idle' },
    ],
  }, {}).sites
  const registry = createRegistry(definitions, sites)

  it('names each version within 60 days of its sunset, or past it, once, with the sites that use it, soonest first', () => {
    const warnings = findSunsetWarnings(registry, sites.map((site) => site.id), now)
    expect(warnings.map(({ adapter, version, sunset, daysLeft, sites }) => ({ adapter, version, sunset, daysLeft, sites }))).toEqual([
      { adapter: 'gone', version: 'v2', sunset: '2031-03-01', daysLeft: -9, sites: ['blog'] },
      { adapter: 'crm', version: '2030-09', sunset: '2031-03-31', daysLeft: 21, sites: ['shop'] },
      { adapter: 'soon', version: 'v7', sunset: '2031-04-30', daysLeft: 51, sites: ['shop', 'blog'] },
    ])
  })

  it('starts warning on the 60th day before the sunset, not the 61st', () => {
    const sixtyOneDaysBefore = new Date(Date.parse('2031-05-15T00:00:00Z') - 61 * DAY_MS)
    expect(findSunsetWarnings(registry, ['shop'], sixtyOneDaysBefore).map((w) => w.adapter)).not.toContain('later')
    const sixtyDaysBefore = new Date(Date.parse('2031-05-15T00:00:00Z') - SUNSET_WARNING_DAYS * DAY_MS)
    expect(findSunsetWarnings(registry, ['shop'], sixtyDaysBefore).map((w) => w.adapter)).toContain('later')
  })

  it('says what stops, when, where and what to do, in one line', () => {
    const [gone, , soon] = findSunsetWarnings(registry, sites.map((site) => site.id), now)
    expect(describeSunset(soon!)).toBe('soon API version v7 is retired by the vendor in 51 days, on 2031-04-30 (https://soon.example/versions); used by sites shop, blog. Upgrade dcgate to a release that speaks a newer version.')
    expect(describeSunset(gone!)).toContain('is retired by the vendor since 2031-03-01')
  })

  it('every adapter that publishes a sunset dates the version it pins', () => {
    for (const adapter of adapters) {
      if (adapter.kind === 'intake-source' || !adapter.apiSunset) continue
      expect(adapter.apiSunset.version, adapter.name).toBe(adapter.apiVersion)
      expect(adapter.apiSunset.date, adapter.name).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(adapter.apiSunset.source, adapter.name).toMatch(/^https:\/\//)
    }
  })
})

describe('start-up log and /readyz (sunsets relative to the real clock)', () => {
  it('warns at start and in /readyz for a version a site uses that retires within 60 days; /readyz stays 200', async () => {
    const now = new Date()
    const lines: LogObject[] = []
    const logger = createConsola({ level: 3, reporters: [{ log: (line) => void lines.push(line) }] })
    const app = await bootTestApp({
      plugins: [],
      sites: [{ id: 'shop', name: 'Shop', destinations: { soon: { token: 't' }, far: { token: 't' } } }],
    }, {
      logger,
      adapters: [adPlatform('soon', sunsetIn(30, now)), adPlatform('far', sunsetIn(SUNSET_WARNING_DAYS + 30, now, 'v9')), adPlatform('unused', sunsetIn(5, now, 'v1'))],
    })
    try {
      const warned = lines.filter((line) => line.type === 'warn').map((line) => String(line.args[0]))
      expect(warned.filter((line) => line.includes('is retired by the vendor'))).toEqual([expect.stringMatching(/^soon API version v7 is retired by the vendor in (29|30) days, on \d{4}-\d{2}-\d{2} \(https:\/\/vendor\.example\/versions\); used by site shop\./)])

      const response = await app.request('/readyz')
      expect(response.status).toBe(200)
      const body = await response.json() as Record<string, any>
      expect(body.status).toBe('ready')
      expect(body.checks).toEqual({ booted: true, database: true })
      expect(body.warnings).toEqual([{ adapter: 'soon', api_version: 'v7', sunset: sunsetIn(30, now).date, days_left: expect.any(Number), source: 'https://vendor.example/versions' }])
      // The public probe names no site.
      expect(JSON.stringify(body)).not.toContain('shop')
    } finally {
      await app.close()
    }
  })
})
