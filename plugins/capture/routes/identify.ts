import type { H3Event } from 'h3'
import { apiError } from '../../../core/http/errors.ts'
import { callHookSafe, type IdentifyPayload } from '../../../core/hooks.ts'
import { hashIdentity } from '../../../core/identity/hash.ts'
import { normalizeEmail } from '../../../core/identity/normalize.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import { consentRequired, personalAllowed } from '../consent.ts'
import type { VisitIntel } from '../intel/types.ts'
import { IdentifyBody, WORKER_SECRET_HEADER, WorkerIdentifyBody } from '../protocol.ts'
import { CopKeyQuery, captureAnswer, capturePrecheck, captureSite, invalidCapture, workerVisitor } from './common.ts'
import { requestVisitor, type Visitor } from '../request.ts'
import { identifyVisit, upsertIdentifiedUser } from '../queries.ts'

/**
 * POST /identify: records the identified user (one per site and email) and adds the email to the visit's
 * identities, so a later server-side conversion for this email (or an earlier one) finds the visit's click ids.
 * Written at once: identifications are rare next to page views, and the conversion that follows must see them.
 */
export function addIdentifyRoute(ctx: PluginContext, intel: VisitIntel): void {
  const handle = async (event: H3Event, body: IdentifyBody, { ip, userAgent }: Visitor) => {
    const site = captureSite(event)
    const verdict = intel.classify({ ip, userAgent, timing: { kind: body.via === 'form' ? 'form' : 'event' } })
    if (!personalAllowed(consentRequired(site, verdict.country, intel), body.consent)) {
      throw apiError(403, { message: 'This visitor has not consented; nothing was stored', code: 'CONSENT_REQUIRED' })
    }
    const email = normalizeEmail(body.email)
    if (!email) throw apiError(400, { message: 'email: must be an email address', errors: ['email: must be an email address'] })
    // A national number from a form is read in the site's country, else the country the visitor is in.
    const identity = hashIdentity({ email, phone: body.fields?.phone }, { defaultCountry: site.config.defaultCountry ?? verdict.country })
    const payload: IdentifyPayload = { siteId: site.id, email, emailHash: identity.email!, source: body.via === 'form' ? 'form' : 'client_sdk', country: verdict.country, isVpn: verdict.isVpn, device: body.device }
    await callHookSafe(ctx.hooks, ctx.logger, 'capture:identify', payload)
    await upsertIdentifiedUser(ctx.prepared, {
      site_id: site.id, email, email_hash: payload.emailHash, source: payload.source, session_id: body.sid, visitor_id: body.vid,
      device_hash: body.device?.hash ?? null, ip_country: verdict.country ?? null, ip_is_vpn: verdict.isVpn,
      email_risk_score: payload.risk?.score ?? null, email_risk_label: payload.risk?.label ?? null, is_disposable: payload.risk?.isDisposable ?? null,
    })
    // The visit row may still be in the capture buffer: it is created here, and the buffered hits merge into it.
    await identifyVisit(ctx.prepared, {
      siteId: site.id, sessionId: body.sid, visitorId: body.vid, email, emailHash: payload.emailHash,
      phone: body.fields?.phone ?? null, firstName: body.fields?.first_name ?? null, lastName: body.fields?.last_name ?? null, consent: body.consent,
    })
    return captureAnswer(event, 202, { ok: true })
  }

  ctx.routes.add({
    method: 'POST',
    path: '/identify',
    auth: 'none',
    summary: 'Identify the visitor by email (dcutils.identifyUser or a mapped form)',
    tags: ['Capture'],
    query: CopKeyQuery,
    body: IdentifyBody,
    precheck: capturePrecheck(ctx),
    invalid: invalidCapture,
    // As on /collect: text PostgreSQL cannot store, which a page can produce and the script cannot fix, is cleaned.
    text: 'clean',
    handler: (event, { body }) => handle(event, body, requestVisitor(event, ctx.config.server.trustProxy)),
  })

  ctx.routes.add({
    method: 'POST',
    path: '/identify/worker',
    auth: 'none',
    summary: 'An identification forwarded by a server-side capture worker',
    description: `An /identify body plus the visitor's \`ip\` and \`userAgent\`. They are believed only with the site's capture.workerSecret in \`${WORKER_SECRET_HEADER}\`; without a configured secret the worker's own address is used.`,
    tags: ['Capture'],
    query: CopKeyQuery,
    body: WorkerIdentifyBody,
    precheck: capturePrecheck(ctx),
    invalid: invalidCapture,
    // As on /collect: text PostgreSQL cannot store, which a page can produce and the script cannot fix, is cleaned.
    text: 'clean',
    handler: (event, { body }) => handle(event, body, workerVisitor(event, body, ctx.config.server.trustProxy)),
  })
}
