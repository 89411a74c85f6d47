import type { H3Event } from 'h3'
import type { ConsentPurposes } from '../../../core/consent/purposes.ts'
import { readConsent } from '../../../core/consent/read.ts'
import { apiError } from '../../../core/http/errors.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import { consentRequired, personalAllowed } from '../consent.ts'
import { firstPartyCookie, verifiedFirstPartyHost } from '../first-party/cookie.ts'
import type { FirstPartyChecker } from '../first-party/state.ts'
import { plainCollectBody } from '../plain-body.ts'
import { toBatch } from '../hits.ts'
import type { VisitIntel } from '../intel/types.ts'
import { acceptPixelConversions, type PixelCaps } from '../pixel.ts'
import { CollectAnswer, CollectBody, WORKER_SECRET_HEADER, WorkerCollectBody } from '../protocol.ts'
import type { CaptureWriter } from '../store/writer.ts'
import type { CaptureBatch } from '../store/rows.ts'
import { CopKeyQuery, captureAnswerText, capturePrecheck, captureSite, invalidCapture, workerVisitor } from './common.ts'
import { globalPrivacyControl, requestVisitor, type Visitor } from '../request.ts'

export interface CollectDeps { ctx: PluginContext, intel: VisitIntel, writer: CaptureWriter, firstParty: FirstPartyChecker, caps: PixelCaps }

/** Seconds a refused client is asked to wait: a few flushes, enough for a database that is back to catch up. */
const BUSY_RETRY_AFTER_S = 5

/**
 * The capture precheck, then the writer's cap: while the hits waiting for the database are past it, a hit is
 * refused before its body is read (503 with Retry-After, and the CORS headers so the script can read it).
 */
function precheckWithRoom(ctx: PluginContext, writer: CaptureWriter) {
  const precheck = capturePrecheck(ctx)
  return (event: H3Event) => {
    precheck(event)
    if (writer.full) {
      throw apiError(503, { message: 'Capture is waiting for the database to catch up; nothing was recorded, retry later', code: 'CAPTURE_BUSY' }, { 'retry-after': String(BUSY_RETRY_AFTER_S) })
    }
  }
}

/**
 * Answers only once the hits are journaled. A journal that cannot be written (disk full, directory gone) is the
 * server's trouble, not the hit's: 503 with Retry-After, so the script or worker sends it again (page events keep
 * their ids, so a hit that still reaches the database with the next flush is not stored twice).
 */
async function journaled(ctx: PluginContext, writer: CaptureWriter, batch: CaptureBatch): Promise<void> {
  try {
    await writer.add(batch)
  }
  catch (error) {
    ctx.logger.error('capture: the journal could not be written', error)
    throw apiError(503, { message: 'Capture could not record the hits now; retry later', code: 'CAPTURE_BUSY' }, { 'retry-after': String(BUSY_RETRY_AFTER_S) })
  }
}

/** POST /collect (the browser) and POST /collect/worker (a server-side worker forwarding the visitor's IP and UA). */
export function addCollectRoutes({ ctx, intel, writer, firstParty, caps }: CollectDeps): void {
  const handle = async (event: H3Event, body: CollectBody, visitor: Visitor) => {
    const site = captureSite(event)
    const receivedAt = new Date()
    const verdict = intel.classify({ ip: visitor.ip, userAgent: visitor.userAgent, signals: body.signals, timing: { kind: body.hits.some((h) => h.t === 'pageview') ? 'pageview' : 'event' } })
    const required = consentRequired(site, verdict.country, intel)
    const personal = personalAllowed(required, body.consent)
    const gpc = globalPrivacyControl(event, body)
    const purposes = pagePurposes(body.cmp)
    const batch = toBatch(body, { siteId: site.id, receivedAt, ip: visitor.ip, userAgent: visitor.userAgent, verdict, personal, gpc, purposes })
    // A refusal with the visit id: the script's one-time notice that the visitor withdrew consent.
    if (body.consent === 'denied' && body.sid) batch.withdrawn = { site_id: site.id, session_id: body.sid }
    await journaled(ctx, writer, batch)
    // On the verified first-party host, the visitor id also goes into an HttpOnly cookie the site's servers can read.
    const cookie = personal && body.vid ? firstPartyCookie(event, verifiedFirstPartyHost(firstParty, site), body.vid) : undefined
    if (personal) await acceptPixelConversions({ ctx, writer, site, body, batch, visitor, bot: verdict.isBot, caps })
    return captureAnswerText(event, 202, collectAnswerJson(required, site.config.consent.banner), cookie ? [['set-cookie', cookie]] : [])
  }

  ctx.routes.add({
    method: 'POST',
    path: '/collect',
    auth: 'none',
    summary: 'Page views, events and bot signals from the tracking script',
    description: 'cop_key in the query string; JSON body (application/json or text/plain from sendBeacon). See docs/api/capture.md.',
    tags: ['Capture'],
    query: CopKeyQuery,
    body: CollectBody,
    plainBody: plainCollectBody,
    responses: { 202: CollectAnswer },
    precheck: precheckWithRoom(ctx, writer),
    invalid: invalidCapture,
    // Pages produce text PostgreSQL cannot store (a title cut inside an emoji); the script cannot fix it, so it is cleaned.
    text: 'clean',
    handler: (event, { body }) => handle(event, body, requestVisitor(event, ctx.config.server.trustProxy)),
  })

  ctx.routes.add({
    method: 'POST',
    path: '/collect/worker',
    auth: 'none',
    summary: 'Hits forwarded by a server-side capture worker',
    description: `A /collect body plus the visitor's \`ip\` and \`userAgent\`. They are believed only with the site's capture.workerSecret in \`${WORKER_SECRET_HEADER}\`; without a configured secret the worker's own address is used.`,
    tags: ['Capture'],
    query: CopKeyQuery,
    body: WorkerCollectBody,
    responses: { 202: CollectAnswer },
    precheck: precheckWithRoom(ctx, writer),
    invalid: invalidCapture,
    // Pages produce text PostgreSQL cannot store (a title cut inside an emoji); the script cannot fix it, so it is cleaned.
    text: 'clean',
    handler: (event, { body }) => {
      return handle(event, body, workerVisitor(event, body, ctx.config.server.trustProxy))
    },
  })
}

/** The six answers /collect gives, serialised once each. */
const ANSWERS = new Map<string, string>()

function collectAnswerJson(required: boolean, banner: CollectAnswer['consent']['banner']): string {
  const key = `${required}:${banner}`
  let json = ANSWERS.get(key)
  if (json === undefined) ANSWERS.set(key, json = JSON.stringify({ ok: true, consent: { required, banner } } satisfies CollectAnswer))
  return json
}

/**
 * The page's consent per purpose. A TC or GPP string the library cannot read does not cost the page views: the
 * purposes the script read from the same tool stand instead.
 */
function pagePurposes(cmp: CollectBody['cmp']): ConsentPurposes | undefined {
  if (!cmp) return undefined
  // Without the Additional Consent string first (the TC string stands without it), then without any string.
  for (const drop of [{}, { addtlConsent: undefined }, { tcString: undefined, gppString: undefined, addtlConsent: undefined }]) {
    try {
      return readConsent({ ...cmp, ...drop }, cmp.source)
    }
    catch {}
  }
  return undefined
}
