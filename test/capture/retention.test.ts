import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { createRetention } from '../../plugins/capture/retention.ts'

// Capture retention on the real database: rows older than a site's retention go, newer ones and other sites' stay.
let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({
    plugins: ['capture'],
    capture: { retentionDays: 30 },
    sites: [
      { id: 'short', name: 'Short' }, // capture.retentionDays: 30
      { id: 'own', name: 'Own', capture: { retentionDays: 400 } },
    ],
  })
})
afterAll(() => app?.close())

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000)

async function seed(site: string, tag: string, days: number, visit: { ended?: number } = {}) {
  const at = daysAgo(days)
  await sql(`insert into page_events (id, site_id, session_id, kind, url, occurred_at, received_at) values (?, ?, ?, 'pageview', 'https://shop.example/', ?, ?)`, [randomUUID(), site, tag, at, at])
  await sql(`insert into visits (id, site_id, session_id, started_at, ended_at) values (?, ?, ?, ?, ?)`, [randomUUID(), site, tag, at, visit.ended === undefined ? null : daysAgo(visit.ended)])
  await sql(`insert into identified_users (id, site_id, email, email_hash, source, identified_at, last_seen_at) values (?, ?, ?, ?, 'client_sdk', ?, ?)`, [randomUUID(), site, `${tag}@example.com`, randomUUID().replaceAll('-', '').padEnd(64, '0'), at, at])
}

const left = async (site: string) => ({
  events: (await sql<{ session_id: string }[]>('select session_id from page_events where site_id = ? order by session_id', [site])).map((r) => r.session_id),
  visits: (await sql<{ session_id: string }[]>('select session_id from visits where site_id = ? order by session_id', [site])).map((r) => r.session_id),
  users: (await sql<{ email: string }[]>('select email from identified_users where site_id = ? order by email', [site])).map((r) => r.email.split('@')[0]),
})

describe('capture retention', () => {
  it('deletes page events, visits and identified users older than the site\'s retention, and nothing else', async () => {
    await seed('short', 'old-1', 45)
    await seed('short', 'old-2', 31)
    await seed('short', 'recent', 5)
    await seed('short', 'ongoing', 40, { ended: 2 }) // started long ago, still active: the visit stays
    await seed('own', 'old-1', 45) // this site keeps 400 days
    await seed('own', 'ancient', 450)

    const rounds = await createRetention(app.dcgate.context, app.dcgate.context.config.capture.retentionDays).run()

    expect(rounds).toEqual([
      { siteId: 'short', days: 30, deleted: { page_events: 3, visits: 2, identified_users: 3 } },
      { siteId: 'own', days: 400, deleted: { page_events: 1, visits: 1, identified_users: 1 } },
    ])
    expect(await left('short')).toEqual({ events: ['recent'], visits: ['ongoing', 'recent'], users: ['recent'] })
    expect(await left('own')).toEqual({ events: ['old-1'], visits: ['old-1'], users: ['old-1'] })
    // A second round finds nothing more.
    expect((await createRetention(app.dcgate.context, app.dcgate.context.config.capture.retentionDays).run()).map((r) => r.deleted)).toEqual([
      { page_events: 0, visits: 0, identified_users: 0 },
      { page_events: 0, visits: 0, identified_users: 0 },
    ])
  })
})
