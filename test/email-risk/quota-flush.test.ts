import { describe, expect, it } from 'vitest'
import type { PluginContext } from '../../core/plugin.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'
import { createQuota } from '../../plugins/email-risk/quota.ts'

/** A database whose count statement answers only when the test lets it; records what each count wrote. */
function slowDatabase() {
  const written: number[] = []
  const held: (() => void)[] = []
  const prepared = (async (statement: { name: string }, params: unknown[]) => {
    if (!statement.name.startsWith('email_risk_count')) return []
    await new Promise<void>((resolve) => held.push(resolve))
    const counts = params[1] as number[]
    written.push(counts[0]!)
    return [{ site_id: 'paid', allowed: counts[0], total: counts[0] }]
  }) as unknown as PluginContext['prepared']
  return { ctx: { prepared, report: () => {} } as unknown as PluginContext, written, release: () => held.splice(0).forEach((go) => go()) }
}

describe('email check quota flush', () => {
  it('waits for a write already under way, so a usage read after it sees every count', async () => {
    const db = slowDatabase()
    const quota = createQuota(db.ctx)
    const site = { id: 'paid', plan: 'business' } as ActiveSite
    await quota.count(site)
    await new Promise((resolve) => setTimeout(resolve, 60)) // the 25 ms timer has started its write, held by the database
    let flushed = false
    const flushing = quota.flush().then(() => { flushed = true })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(flushed).toBe(false)
    db.release()
    await flushing
    expect(db.written).toEqual([1])
  })
})
