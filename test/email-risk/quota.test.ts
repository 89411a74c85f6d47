import { serve } from 'h3'
import type { Server } from 'srvx'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createAdminClient } from '../../core/cli/admin-client.ts'
import { usageCommand } from '../../core/cli/commands/usage.ts'
import { CliError, createOutput } from '../../core/cli/output.ts'
import { startWorld, type EmailRiskWorld } from './support.ts'

let world: EmailRiskWorld
const keys: Record<string, string> = {}
const SITES = [
  { id: 'demo', name: 'Demo' },
  { id: 'counted', name: 'Counted' },
  { id: 'freebie', name: 'Free', plan: 'free' as const },
  { id: 'biz', name: 'Business', plan: 'business' as const },
  { id: 'org', name: 'Organization', plan: 'organization' as const },
  { id: 'neighbour', name: 'Neighbour' },
  { id: 'rush', name: 'Rush' },
]

beforeAll(async () => {
  world = await startWorld({ capture: false, config: { sites: SITES } })
  for (const site of SITES) keys[site.id] = await world.app.createKey(site.id)
})
afterAll(() => world?.close())

const sql = <T extends object[]>(text: string, params: unknown[] = []) => world.app.dcgate.context.orm.em.getConnection().execute<T>(text, params)
const month = () => new Date().toISOString().slice(0, 7)
const check = (site: string, email: string) => world.check(email, keys[site])

async function usage(site: string): Promise<Record<string, unknown>> {
  const response = await world.app.admin('GET', `/sites/${site}/email-checks/usage`)
  expect(response.status).toBe(200)
  return await response.json() as Record<string, unknown>
}

describe('email check quota', () => {
  it('counts every check, stored or live, once', async () => {
    for (const email of ['lena@gmail.com', 'lena@gmail.com', 'tom@gmail.com']) expect((await check('counted', email)).status).toBe(200)
    expect(await usage('counted')).toMatchObject({
      site: 'counted', plan: 'free', checks: 3, free_checks: 500, free_left: 497, billable: 0, blocked: false,
      months: [{ month: month(), checks: 3, billable: 0 }],
    })
  })

  it('answers the 501st check of a free site with 429, and counts nothing more', async () => {
    await sql(`insert into email_check_quotas (site_id, checks, billable) values ('freebie', 499, 0)`)
    expect((await check('freebie', 'check500@gmail.com')).status).toBe(200)
    const refused = await check('freebie', 'check501@gmail.com')
    expect(refused.status).toBe(429)
    expect(await refused.json()).toEqual({
      message: 'The free plan\'s 500 email checks are used up; upgrade the site\'s plan to keep checking',
      code: 'EMAIL_CHECK_QUOTA_EXCEEDED',
    })
    expect((await check('freebie', 'check500@gmail.com')).status).toBe(429)
    expect(await usage('freebie')).toMatchObject({ checks: 500, free_left: 0, billable: 0, blocked: true })
    expect(await sql(`select email from identified_users where site_id = 'freebie'`)).toEqual([{ email: 'check500@gmail.com' }])
  })

  it.each(['biz', 'org'])('keeps answering a paid site (%s) past 500 and counts the billable checks', async (site) => {
    await sql(`insert into email_check_quotas (site_id, checks, billable) values (?, 499, 0)`, [site])
    for (let i = 0; i < 4; i++) expect((await check(site, `buyer${i}@northwind-traders.com`)).status).toBe(200)
    expect(await usage(site)).toMatchObject({ checks: 503, free_left: 0, billable: 3, blocked: false, months: [{ month: month(), checks: 4, billable: 3 }] })
  })

  it('keeps each site\'s count apart', async () => {
    await sql(`insert into email_check_quotas (site_id, checks, billable) values ('demo', 500, 0)`)
    expect((await check('demo', 'lena@gmail.com')).status).toBe(429)
    expect((await check('neighbour', 'lena@gmail.com')).status).toBe(200)
  })

  it('answers concurrent checks at the limit exactly up to 500', async () => {
    await sql(`insert into email_check_quotas (site_id, checks, billable) values ('rush', 430, 0)`)
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => check('rush', `rush${i}@gmail.com`).then((r) => r.status)))
    expect(statuses.filter((s) => s === 200)).toHaveLength(70)
    expect(statuses.filter((s) => s === 429)).toHaveLength(30)
    expect(await usage('rush')).toMatchObject({ checks: 500, months: [{ month: month(), checks: 70, billable: 0 }] })
  })

  it('counts a paid site\'s checks without waiting, and writes them within moments', async () => {
    const before = (await usage('org')).checks as number
    await Promise.all(Array.from({ length: 30 }, (_, i) => check('org', `fast${i}@gmail.com`)))
    await new Promise((resolve) => setTimeout(resolve, 200))
    const [row] = await sql<{ checks: number }[]>(`select checks from email_check_quotas where site_id = 'org'`)
    expect(row!.checks).toBe(before + 30)
  })

  it('is not found for a site that is not configured', async () => {
    expect((await world.app.admin('GET', '/sites/nope/email-checks/usage')).status).toBe(404)
  })
})

describe('dcgate usage --site <id>', () => {
  let server: Server
  beforeAll(async () => {
    server = serve(world.app.dcgate.app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
    await server.ready()
  })
  afterAll(() => server?.close(true))

  const run = async (site: string | undefined, json = false): Promise<string> => {
    const written: string[] = []
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    try {
      await usageCommand(createAdminClient(world.app.dcgate.config, server.url), createOutput(json), { site })
    }
    finally {
      spy.mockRestore()
    }
    return written.join('')
  }

  it('prints the checks, the free ones left, the billable ones and each month', async () => {
    const text = await run('biz')
    expect(text).toContain('Email checks of site biz (plan business): 503 in all, 0 of the first 500 free left, 3 billable')
    expect(text).toMatch(new RegExp(`MONTH\\s+CHECKS\\s+BILLABLE\\n${month()}\\s+4\\s+3`))
    expect(await run('freebie')).toContain('further checks answer 429')
    expect(JSON.parse(await run('biz', true))).toMatchObject({ site: 'biz', checks: 503, billable: 3 })
  })

  it('needs --site and a configured site', async () => {
    await expect(run(undefined)).rejects.toThrow(CliError)
    await expect(run('nope')).rejects.toThrow('Unknown site "nope"')
  })
})
