import { expect } from 'vitest'
import type { TestApp } from '../helpers/app.ts'
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
