import type { H3Event } from 'h3'
import { readTextBody } from '../../core/http/body.ts'
import { unstorableReason } from '../../core/http/text.ts'
import { html, layout, type LayoutInput } from './html.ts'

/** Scripts and styles only from /dashboard/assets; forms post to this origin only; never framed. */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

/** The CSP of a page whose forms may also lead to these origins (see PageResult.formTargets). */
export function allowFormTargets(event: H3Event, origins: readonly string[]): void {
  if (origins.length) event.res.headers.set('content-security-policy', CSP.replace("form-action 'self'", `form-action 'self' ${origins.join(' ')}`))
}

/** Form bodies are a few fields; anything larger is not one of our forms. */
const FORM_LIMIT = 64 * 1024

function secureHeaders(event: H3Event): void {
  const headers = event.res.headers
  headers.set('content-security-policy', CSP)
  headers.set('cache-control', 'no-store')
  headers.set('referrer-policy', 'no-referrer')
  headers.set('x-content-type-options', 'nosniff')
  headers.set('x-frame-options', 'DENY')
}

/** Answers a whole HTML document with the dashboard's security headers. */
export function sendPage(event: H3Event, status: number, page: string): string {
  event.res.status = status
  event.res.headers.set('content-type', 'text/html; charset=utf-8')
  secureHeaders(event)
  return page
}

/** A short page that says what went wrong (403, 404, 429…), in the layout, signed in or not. */
export function sendProblem(event: H3Event, status: number, title: string, text: string, session?: LayoutInput['session']): string {
  return sendPage(event, status, layout({ title, session, body: html`<h1>${title}</h1><p>${text}</p><p><a href="/dashboard">Back to the dashboard</a></p>` }))
}

/** 303 to a page of ours: after every POST, so a reload never repeats it. */
export function redirect(event: H3Event, location: string): null {
  event.res.status = 303
  event.res.headers.set('location', location)
  secureHeaders(event)
  return null
}

export type FormResult = { form: URLSearchParams } | { problem: string, status: number }

/**
 * A posted form: only application/x-www-form-urlencoded, at most 64 KiB, every field text PostgreSQL can store.
 * A POST sent by another site's page (Sec-Fetch-Site cross-site or same-site) is refused before the body is read.
 */
export async function readForm(event: H3Event): Promise<FormResult> {
  const fetchSite = event.req.headers.get('sec-fetch-site')
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') return { status: 403, problem: 'This form was sent from another site.' }
  const type = event.req.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') return { status: 415, problem: 'Send the form as application/x-www-form-urlencoded.' }
  const form = new URLSearchParams(await readTextBody(event, FORM_LIMIT))
  for (const [name, value] of form) {
    if (name.length > 100 || value.length > 10_000 || unstorableReason(name) || unstorableReason(value)) {
      return { status: 400, problem: 'A field of this form is too long or holds characters that cannot be stored.' }
    }
  }
  return { form }
}

/** The query string, or undefined when a value is too long or holds text PostgreSQL cannot store. */
export function readQuery(event: H3Event): URLSearchParams | undefined {
  const query = event.url.searchParams
  for (const [name, value] of query) {
    if (name.length > 100 || value.length > 2000 || unstorableReason(name) || unstorableReason(value)) return undefined
  }
  return query
}
