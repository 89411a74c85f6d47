import * as v from 'valibot'
import { clientIp } from '../../../core/http/client-ip.ts'
import { apiError } from '../../../core/http/errors.ts'
import { canonicalEmail, EMAIL_MESSAGE } from '../../../core/identity/email.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import { metrics } from '../../../core/metrics/registry.ts'
import { overIpLimit } from '../rate-limit.ts'
import type { Dsar } from '../service.ts'

/**
 * Open to every origin: the cop_key is public, a request only records and mails (nothing is erased before the
 * person confirms from their inbox), and the answer is the same whatever data exists. The per-email and per-IP
 * limits keep it from being used to flood an inbox.
 */
const CORS = { 'access-control-allow-origin': '*', 'vary': 'Origin' }
const failure = (status: number, message: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
  apiError(status, { success: false, message, ...extra }, { ...CORS, ...headers })
/** The spec's "Invalid email", naming the field and the rule; never the value. */
const invalidEmail = () => failure(400, 'Invalid email', {}, { errors: [`email: ${EMAIL_MESSAGE}`] })

/** Said to every accepted request, new or repeated, whether or not the site holds anything about the email. */
export const REQUEST_MESSAGE = 'Your request has been received. We have sent a confirmation link to this email address: '
  + 'open it and press the button on that page to have your data deleted. If no email arrives, check your spam '
  + 'folder; a new request for the same address is possible after 24 hours.'

const RequestBody = v.object({
  email: v.optional(v.unknown()),
  cop_key: v.optional(v.unknown()),
  pageUrl: v.optional(v.unknown()),
})

const Answer = v.object({ success: v.literal(true), message: v.string() })

/** POST /public/data-deletion/request (spec): records the request and mails the confirmation link. */
export function addPublicRequestRoute(ctx: PluginContext, dsar: Dsar): void {
  ctx.app.options('/public/data-deletion/request', (event) => {
    for (const [name, value] of Object.entries({ ...CORS, 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type', 'access-control-max-age': '86400' })) {
      event.res.headers.set(name, value)
    }
    event.res.status = 204
    return null
  })

  ctx.routes.add({
    method: 'POST',
    path: '/public/data-deletion/request',
    auth: 'none',
    summary: 'Ask a site to delete the data it holds about an email (confirmed by email)',
    description: 'Body {email, cop_key, pageUrl?}. Always the same answer for a valid request, whatever data exists. '
      + 'One request per email and site per 24 hours (a repeat gets the same answer and no mail); at most 10 requests '
      + 'per IP address an hour (429). Email: exactly one mailbox; the request, the 24-hour rule and the mail use its canonical form '
      + '(trimmed, lower case). The person receives a single-use link to a confirmation page, the confirmation code and a status link.',
    tags: ['Data deletion'],
    body: RequestBody,
    responses: { 200: Answer, 400: { description: 'Invalid email; missing or invalid cop_key' }, 403: { description: 'Deletion requests are switched off for this site' }, 429: { description: 'Too many requests from this address' } },
    invalid: (problems) => failure(400, problems.join('; ')),
    handler: async (event, { body }) => {
      const site = typeof body.cop_key === 'string' && body.cop_key ? ctx.sites.byCopKey(body.cop_key) : undefined
      if (!site) throw failure(400, body.cop_key === undefined || body.cop_key === '' ? 'cop_key: is required' : 'Invalid cop_key')
      if (!site.config.deletion.enabled) throw failure(403, 'Deletion requests are switched off for this site; contact the site owner')
      const email = canonicalEmail(body.email)
      if (!email) throw invalidEmail()
      const wait = await overIpLimit(ctx.storage, clientIp(event, ctx.config.server.trustProxy))
      if (wait) throw failure(429, 'Too many deletion requests from this address; try again later', { 'retry-after': String(wait) })

      const created = await dsar.store.createPublic(site, email, recordablePageUrl(body.pageUrl))
      if (created) dsar.confirm(created.row, created.token)
      if (created) metrics.deletionRequests.inc({ channel: 'public' })
      for (const [name, value] of Object.entries(CORS)) event.res.headers.set(name, value)
      return { success: true, message: REQUEST_MESSAGE }
    },
  })
}

/** The page the form was on, for the owner's records: origin and path only (a query may carry personal data). */
function recordablePageUrl(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw.length > 4096) return undefined
  try {
    const url = new URL(raw)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
    return `${url.origin}${url.pathname}`.slice(0, 2048)
  }
  catch {
    return undefined
  }
}
