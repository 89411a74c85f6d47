import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COP_KEY, startWorld, type EmailRiskWorld } from '../email-risk/support.ts'
import { sample, scrape as scrapeMetrics } from './scrape.ts'

// The plugins' metrics, through their real routes: email checks, capture's flushes and queue, deletion requests
// and their erasures. Counters are per process; the test reads the change around its own requests.
let world: EmailRiskWorld
beforeAll(async () => {
  world = await startWorld({ morePlugins: ['dsar'], config: { capture: { flushIntervalMs: 50 } } })
})
afterAll(() => world?.close())

const scrape = () => scrapeMetrics(world.app)

/** Scrapes until `done` holds (capture writes on its own timer); the last scrape. */
async function scrapeUntil(done: (text: string) => boolean, deadlineMs = 20_000): Promise<string> {
  const deadline = Date.now() + deadlineMs
  let text = await scrape()
  while (!done(text) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    text = await scrape()
  }
  return text
}

describe('plugin metrics', () => {
  it('counts an email check by its risk label', async () => {
    const before = await scrape()
    const response = await world.check('anna@gmail.com')
    expect(response.status).toBe(200)
    const { data } = await response.json() as { data: { emailInfo: { risk_label: string } } }
    const after = await scrape()
    const risk = { risk: data.emailInfo.risk_label }
    expect(sample(after, 'dcgate_email_checks_total', risk) - sample(before, 'dcgate_email_checks_total', risk)).toBe(1)
    expect(after).not.toContain('anna')
  })

  it('times capture flushes and serves its queue and journal gauges', async () => {
    const before = await scrape()
    const hit = await world.app.request(`/collect?cop_key=${COP_KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36' },
      body: JSON.stringify({ v: 1, sid: 'metrics-session', vid: 'metrics-visitor', consent: 'granted', hits: [{ t: 'pageview', ts: Date.now(), url: 'https://shop.example/' }] }),
    })
    expect(hit.status).toBeLessThan(300)
    const flushed = (text: string) => sample(text, 'dcgate_capture_flush_duration_seconds_count', { outcome: 'ok' }) > sample(before, 'dcgate_capture_flush_duration_seconds_count', { outcome: 'ok' })
    const after = await scrapeUntil((text) => flushed(text) && sample(text, 'dcgate_capture_queued_hits') === 0)
    expect(flushed(after)).toBe(true)
    expect(sample(after, 'dcgate_capture_queued_hits')).toBe(0)
    expect(after).toMatch(/^dcgate_capture_journal_bytes \d+$/m)
    expect(sample(after, 'dcgate_http_requests_total', { method: 'POST', route: '/collect', status: String(hit.status) })).toBeGreaterThanOrEqual(1)
  })

  it('counts a deletion request made through the API and its erasure', async () => {
    const before = await scrape()
    const response = await world.app.request('/api/v1/data-deletion', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-dc-key': world.key },
      body: JSON.stringify({ email: 'erase.me@example.com' }),
    })
    expect(response.status).toBe(200)
    const after = await scrape()
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels)
    expect(delta('dcgate_deletion_requests_total', { channel: 'api' })).toBe(1)
    expect(delta('dcgate_erasures_total', { outcome: 'completed' })).toBe(1)
    expect(after).not.toContain('erase.me')
  })
})
