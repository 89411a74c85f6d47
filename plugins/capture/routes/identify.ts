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

/** The identities one visit keeps: people share a computer, a form is filled in twice; more is a page in a loop. */
export const MAX_VISIT_IDENTITIES = 20

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
    const identity = hashIdentity({ email, phone: body.fields?.phone })
    const payload: IdentifyPayload = { siteId: site.id, email, emailHash: identity.email!, source: body.via === 'form' ? 'form' : 'client_sdk', country: verdict.country, isVpn: verdict.isVpn, device: body.device }
    await callHookSafe(ctx.hooks, ctx.logger, 'capture:identify', payload)
    const sql = ctx.orm.em.getConnection()
    await sql.execute(
      `insert into identified_users as u (id, site_id, email, email_hash, source, session_id, visitor_id, device_hash, ip_country, ip_is_vpn,
         email_risk_score, email_risk_label, is_disposable, identified_at, last_seen_at)
       values (gen_random_uuid(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now())
       on conflict (site_id, email_hash) do update set last_seen_at = now(), session_id = excluded.session_id,
         visitor_id = excluded.visitor_id, device_hash = coalesce(excluded.device_hash, u.device_hash),
         email_risk_score = coalesce(excluded.email_risk_score, u.email_risk_score),
         email_risk_label = coalesce(excluded.email_risk_label, u.email_risk_label),
         is_disposable = coalesce(excluded.is_disposable, u.is_disposable)`,
      [site.id, email, payload.emailHash, payload.source, body.sid, body.vid, body.device?.hash ?? null, verdict.country ?? null, verdict.isVpn,
        payload.risk?.score ?? null, payload.risk?.label ?? null, payload.risk?.isDisposable ?? null],
    )
    // The visit row may still be in the capture buffer: create it here, the buffered hits merge into it. The visit
    // keeps every identity it is given (email_hashes), so conversions and erasure find it by any of them; past
    // MAX_VISIT_IDENTITIES a further one is not put on it (a page calling identifyUser in a loop).
    await sql.execute(
      `insert into visits as v (id, site_id, session_id, visitor_id, email, email_hash, email_hashes, phone, first_name, last_name, identified_at, consent)
       values (gen_random_uuid(), ?, ?, ?, ?, ?, array[?]::text[], ?, ?, ?, now(), ?)
       on conflict (site_id, session_id) do update set email = excluded.email, email_hash = excluded.email_hash,
         email_hashes = case when v.email_hashes @> excluded.email_hashes then v.email_hashes else coalesce(v.email_hashes, '{}') || excluded.email_hashes end,
         phone = coalesce(excluded.phone, v.phone), first_name = coalesce(excluded.first_name, v.first_name),
         last_name = coalesce(excluded.last_name, v.last_name), identified_at = coalesce(v.identified_at, now()), updated_at = now()
       where v.email_hashes is null or v.email_hashes @> excluded.email_hashes or cardinality(v.email_hashes) < ${MAX_VISIT_IDENTITIES}`,
      [site.id, body.sid, body.vid, email, payload.emailHash, payload.emailHash, body.fields?.phone ?? null, body.fields?.first_name ?? null, body.fields?.last_name ?? null, body.consent],
    )
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
