import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../core/config/load.ts'
import { BootError } from '../../core/errors.ts'
import { recipientsOf } from '../../core/health/alerts.ts'
import type { ActiveSite } from '../../core/sites/directory.ts'

// sites[].alerts: its defaults, who is mailed, and what it refuses at start-up.
const site = (alerts?: unknown) => ({ id: 'shop', name: 'Shop', members: ['Owner@Shop.example', 'analyst@shop.example'], ...(alerts === undefined ? {} : { alerts }) })

function problems(alerts: unknown): string[] {
  try {
    resolveConfig({ sites: [site(alerts)] }, {})
  }
  catch (error) {
    if (error instanceof BootError) return error.details
    throw error
  }
  throw new Error('expected the config to be rejected')
}

const active = (alerts?: unknown) => ({ id: 'shop', config: resolveConfig({ sites: [site(alerts)] }, {}).sites[0]! }) as ActiveSite

describe('sites[].alerts', () => {
  it('mails the site\'s members by default, a failure share above 25% in 60 minutes', () => {
    expect(resolveConfig({ sites: [site()] }, {}).sites[0]!.alerts).toEqual({ email: true, failureRate: 0.25, windowMinutes: 60 })
    expect(recipientsOf(active())).toEqual(['owner@shop.example', 'analyst@shop.example'])
  })

  it('mails nobody with email: false, and only the addresses listed with a list', () => {
    expect(recipientsOf(active({ email: false }))).toEqual([])
    expect(recipientsOf(active({ email: ['ops@shop.example', 'OPS@shop.example'] }))).toEqual(['ops@shop.example'])
  })

  it('refuses a share outside 0..1, a window out of range, a webhook that is not http(s), a short secret and a bad address', () => {
    expect(problems({ failureRate: 1.5 }).join('\n')).toMatch(/sites\[0\]\.alerts\.failureRate.*at most 1/)
    expect(problems({ windowMinutes: 1 }).join('\n')).toMatch(/sites\[0\]\.alerts\.windowMinutes.*at least 5/)
    expect(problems({ webhookUrl: 'javascript:alert(1)' }).join('\n')).toMatch(/sites\[0\]\.alerts\.webhookUrl/)
    expect(problems({ webhookSecret: 'short' }).join('\n')).toMatch(/sites\[0\]\.alerts\.webhookSecret.*at least 24/)
    expect(problems({ email: ['not an address'] }).join('\n')).toMatch(/sites\[0\]\.alerts\.email/)
    expect(problems({ emial: true }).join('\n')).toMatch(/emial/)
  })
})
