import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createConsola } from 'consola'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import type { CaptureBatch } from '../../plugins/capture/store/rows.ts'
import { createCaptureWriter } from '../../plugins/capture/store/writer.ts'

// page_events' key is (id, received_at) since it is partitioned by day: a hit the script sends again (retried, or
// after consent) arrives later, with another received_at, and must still be stored and counted once.
let app: TestApp
beforeAll(async () => {
  app = await bootTestApp({ plugins: [] })
}, 120_000)
afterAll(() => app?.close())

const sql = <T extends object[]>(text: string, params: unknown[] = []) => app.dcgate.database.orm.em.getConnection().execute<T>(text, params)

function writer() {
  const dir = mkdtempSync(join(tmpdir(), 'resent-'))
  return createCaptureWriter({
    prepared: app.dcgate.context.prepared, journalDir: join(dir, 'journal'), deadLetterDir: join(dir, 'dead-letter'),
    flushSize: 1000, flushIntervalMs: 60_000, logger: createConsola({ level: 0 }), onError: () => {},
  })
}

/** The same page view (one id) as received at `receivedAt`, for `session`. */
function sent(id: string, session: string, receivedAt: number): CaptureBatch {
  return {
    events: [{ id, site_id: 'demo', session_id: session, kind: 'pageview', name: null, url: 'https://shop.example/', referrer: null, title: null, props: null, occurred_at: receivedAt - 50, received_at: receivedAt }],
    visit: {
      site_id: 'demo', session_id: session, visitor_id: 'v-1', started_at: receivedAt, ended_at: receivedAt, ip_address: null, user_agent: 'UA', country: 'DE',
      city: null, isp: null, organization: null, asn: null, is_vpn: false, is_proxy: false, is_tor: false, is_hosting: false, platform: 'desktop',
      browser: null, os: null, is_bot: false, bot_reasons: [], referrer: null, landing_url: 'https://shop.example/', click_ids: {}, consent: 'unknown', device_hash: null, gpc: false, consent_purposes: null,
    },
  }
}

const stored = async (id: string) => sql<{ n: number, pages: number }[]>(
  `select (select count(*)::int from page_events where id = ?) as n, (select page_count from visits v join page_events e on e.site_id = v.site_id and e.session_id = v.session_id where e.id = ? limit 1) as pages`,
  [id, id],
)

describe('a hit sent again', () => {
  it('in a later flush, a few seconds later, is stored and counted once', async () => {
    const w = writer()
    await w.start()
    const id = randomUUID()
    const now = Date.now()
    await w.add(sent(id, 'resent-later', now - 5000))
    await w.flush()
    await w.add(sent(id, 'resent-later', now))
    await w.flush()
    expect(await stored(id)).toEqual([{ n: 1, pages: 1 }])
    await w.stop()
  })

  it('in the same flush, a second later, is stored and counted once', async () => {
    const w = writer()
    await w.start()
    const id = randomUUID()
    const now = Date.now()
    await w.add(sent(id, 'resent-same-flush', now - 1000))
    await w.add(sent(id, 'resent-same-flush', now))
    await w.flush()
    expect(await stored(id)).toEqual([{ n: 1, pages: 1 }])
    await w.stop()
  })
})
