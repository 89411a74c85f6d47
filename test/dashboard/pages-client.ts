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
