/** What the dashboard's browser tests share: signing in with the emailed link (read from the outbox), and waiting. */
import type { Page } from 'playwright-core'
import { expect } from 'vitest'
import { mailedLinks } from '../helpers/outbox.ts'

/** Polls wait this long: a loaded 2-core machine may take seconds to answer a form. */
export const SLOW = { timeout: 20_000, interval: 100 }

/** Asks for a sign-in link as `email` on the dashboard at `baseUrl`, opens it from the server's outbox and signs in. */
export async function signInByEmailedLink(page: Page, server: { url: string, dataDir: string }, email: string): Promise<void> {
  await page.goto(`${server.url}/dashboard`)
  await page.getByLabel('Email').fill(email)
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click()
  await expect.poll(() => page.getByRole('heading', { name: 'Check your email' }).count(), SLOW).toBe(1)
  let link = ''
  await until(async () => Boolean(link = (await mailedLinks(server.dataDir, email))[0] ?? ''), 'the sign-in mail in the outbox')
  const url = new URL(link)
  await page.goto(`${server.url}${url.pathname}${url.search}`)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** Polls `check` until it holds, or throws naming `what` after `deadlineMs`. */
export async function until(check: () => Promise<boolean> | boolean, what: string, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs
  while (Date.now() < end) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}
