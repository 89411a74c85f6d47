import type { H3Event } from 'h3'
import * as v from 'valibot'
import { readTextBody } from '../../../core/http/body.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import type { RequestRow } from '../queries/requests.ts'
import type { Dsar } from '../service.ts'
import { renderConfirmPage, renderInvalidLinkPage, renderMissingTokenPage } from '../status-page.ts'
import { html } from './proof.ts'

export const CONFIRM_PATH = '/public/dsar/confirm'
/** The tokens dcgate mails are 43 base64url characters; anything else is looked up nowhere. */
const TOKEN = /^[A-Za-z0-9_-]{16,128}$/

/**
 * The link in the confirmation mail, in two steps, because mail scanners and link previews open links:
 * - GET /public/dsar/confirm?token= shows a page (no script, works without JavaScript) naming the site, the masked
 *   address and the confirmation code, with one button. Opening it changes nothing.
 * - The button POSTs the token in the form body to the same path; that runs the erasure once (received →
 *   processing → completed) and redirects (303) to the status page. A POST without the token in its body is
 *   refused, whatever its query says, so a cross-site form cannot confirm without knowing the secret.
 * Only the token's hash is stored, so the link cannot be rebuilt from the database.
 */
export function addConfirmRoute(ctx: PluginContext, dsar: Dsar): void {
  const lookup = (token: string | null | undefined) => (token && TOKEN.test(token) ? dsar.store.byToken(token) : Promise.resolve(undefined))
  const formAction = `form-action 'self' ${originOf(dsar.statusUrl(''))}`

  ctx.routes.add({
    method: 'GET',
    path: CONFIRM_PATH,
    auth: 'none',
    summary: 'The page behind the emailed confirmation link',
    description: 'Shows the request (masked email, confirmation code) and a button that confirms it; opening it erases nothing. '
      + 'A request already completed redirects (303) to its status page. An unknown or purged link answers an HTML page with 404.',
    tags: ['Data deletion'],
    query: v.looseObject({ token: v.optional(v.string()) }),
    handler: async (event, { query }) => {
      const row = await lookup(query.token)
      if (!row) return html(event, 404, renderInvalidLinkPage())
      if (row.status === 'completed') return toStatus(event, row)
      const page = renderConfirmPage({
        siteName: dsar.siteName(row.site_id), maskedEmail: row.masked_email, code: row.code, token: query.token!,
        action: CONFIRM_PATH, statusUrl: dsar.statusUrl(row.code),
      })
      const body = html(event, 200, page)
      event.res.headers.set('content-security-policy', `default-src 'none'; style-src 'unsafe-inline'; ${formAction}; frame-ancestors 'none'; base-uri 'none'`)
      return body
    },
  })

  ctx.routes.add({
    method: 'POST',
    path: CONFIRM_PATH,
    auth: 'none',
    summary: 'Confirm a deletion request (the button on the confirmation page)',
    description: 'Form body (application/x-www-form-urlencoded) `token=<the token from the emailed link>`. The first confirmation erases '
      + 'the data and redirects (303) to the status page; later ones redirect without erasing. A body without the token answers 400, '
      + 'an unknown or purged token 404 (HTML pages).',
    tags: ['Data deletion'],
    handler: async (event) => {
      const token = await formToken(event, ctx.config.server.bodyLimit)
      if (!token) return html(event, 400, renderMissingTokenPage())
      const row = await lookup(token)
      if (!row) return html(event, 404, renderInvalidLinkPage())
      if (row.status !== 'completed') await dsar.erase(row.id, 'confirmed')
      return toStatus(event, row)
    },
  })

  function toStatus(event: H3Event, row: RequestRow): null {
    event.res.status = 303
    event.res.headers.set('location', dsar.statusUrl(row.code))
    event.res.headers.set('cache-control', 'no-store')
    event.res.headers.set('referrer-policy', 'no-referrer')
    return null
  }
}

/** The token field of a form body; undefined when the body is not a form or has none. */
async function formToken(event: H3Event, bodyLimit: number): Promise<string | undefined> {
  const type = event.req.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') return undefined
  return new URLSearchParams(await readTextBody(event, bodyLimit)).get('token') ?? undefined
}

function originOf(url: string): string {
  try {
    return new URL(url).origin
  }
  catch {
    return "'self'"
  }
}
