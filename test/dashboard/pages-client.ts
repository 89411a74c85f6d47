import { expect } from 'vitest'
import { bootTestApp, type TestApp } from '../helpers/app.ts'
import { testPlatform } from '../delivery/test-platform.ts'
import { builtInPlugins } from '../../plugins/index.ts'
import dashboard from '../../plugins/dashboard/index.ts'
import { createBrowser, type Browser } from './support.ts'

/**
 * For the page tests: a browser signed in as the operator (admin token), or as the member with this address (the
 * emailed link), that has opened a signed-in page, so its forms carry the session's CSRF token.
 */
export async function signIn(app: TestApp, member?: string): Promise<Browser> {
  const browser = createBrowser(app)
  const answer = member ? await browser.signInAsMember(member) : await browser.signInAsOperator(app.dcgate.adminToken)
  expect(answer.status).toBe(303)
  await browser.get('/dashboard')
  return browser
}

/** Polls until the condition holds (the delivery worker runs on its own schedule); throws past the deadline. */
export async function until(condition: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A page's table body as rows of cell text (tags stripped). */
export function rows(html: string): string[][] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? ''
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cell[1]!.replace(/<[^>]+>/g, '').trim()))
}

/**
 * The page tests' server: intake, release and the dashboard; site `shop` sending to the test platform at
 * `platformUrl` and holding `qualified_lead` until qualified, site `other` with `member` as its member.
 */
export function bootShopWithHeldLeads(platformUrl: string, member: string): Promise<TestApp> {
  return bootTestApp({
    // The browser stand-in signs in from an address of its own per run (X-Forwarded-For): sign-in limits are shared on Redis.
    server: { trustProxy: true },
    plugins: ['intake', 'release', 'dashboard'],
    delivery: { workerIntervalMs: 25 },
    sites: [
      {
        id: 'shop', name: 'Shop', destinations: { testads: { baseUrl: platformUrl, token: 'good' } },
        events: [{ key: 'qualified_lead', name: 'Qualified lead', sendsAs: 'Lead', release: 'when_qualified' }],
      },
      { id: 'other', name: 'Other shop', members: [member] },
    ],
  }, { adapters: [testPlatform], builtInPlugins: { ...builtInPlugins, dashboard } })
}
