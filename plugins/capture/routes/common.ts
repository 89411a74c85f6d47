import { timingSafeEqual } from 'node:crypto'
import type { H3Event } from 'h3'
import * as v from 'valibot'
import { fastJson, fastJsonText } from '../../../core/http/answer.ts'
import type { TrustProxy } from '../../../core/http/client-ip.ts'
import { apiError } from '../../../core/http/errors.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import type { ActiveSite } from '../../../core/sites/directory.ts'
import { WORKER_SECRET_HEADER } from '../protocol.ts'
import { verifiedFirstPartyHost } from '../first-party/cookie.ts'
import { installedFirstParty } from '../first-party/install.ts'
import { corsHeaders, originVerdict, requestVisitor, type OriginVerdict, type Visitor } from '../request.ts'

export const CopKeyQuery = v.looseObject({ cop_key: v.pipe(v.string('is required'), v.minLength(1, 'is required'), v.maxLength(128)) })

declare module 'h3' {
  interface H3EventContext {
    /** The site of a capture request's cop_key (set by capturePrecheck). */
    captureSite?: ActiveSite
  }
}

/**
 * Before the body is read: the cop_key names an active site (404 otherwise, 402 for a paused one), and a browser
 * origin is one the site takes (403 otherwise, see originVerdict). Chooses the CORS headers every answer then carries.
 */
export function capturePrecheck(ctx: PluginContext) {
  return (event: H3Event) => {
    const copKey = event.url.searchParams.get('cop_key')
    const site = copKey ? ctx.sites.byCopKey(copKey) : undefined
    if (!site) throw apiError(404, { message: copKey ? 'Unknown cop_key' : 'cop_key: is required' })
    // Set before the checks below, so a refused origin or a paused site still counts as this site's request (live events).
    event.context.captureSite = site
    const origin = event.req.headers.get('origin')
    const verdict = origin === null ? undefined : captureOriginVerdict(ctx, origin, site)
    if (verdict === 'refused') throw apiError(403, { message: `Origin ${origin} is not one of the site's domains` })
    event.context.answerHeaders = corsHeaders(origin, verdict)
    if (site.status === 'paused') throw apiError(402, { message: 'This site is paused; nothing was recorded', code: 'APP_INACTIVE' })
  }
}

/** The CORS verdict for a page at `origin` (see originVerdict), with the site's first-party host if verified. */
export function captureOriginVerdict(ctx: PluginContext, origin: string, site: ActiveSite): OriginVerdict {
  const checker = installedFirstParty(ctx)
  return originVerdict(origin, site, checker ? verifiedFirstPartyHost(checker, site) : undefined)
}

export function captureSite(event: H3Event): ActiveSite {
  return event.context.captureSite!
}

/** A capture route's answer: JSON with the CORS headers the precheck chose, and any more (a cookie). */
export function captureAnswer(event: H3Event, status: number, body: unknown, more: readonly [string, string][] = []): Response {
  return captureAnswerText(event, status, JSON.stringify(body), more)
}

/** captureAnswer with the body already serialised. */
export function captureAnswerText(event: H3Event, status: number, json: string, more: readonly [string, string][] = []): Response {
  const cors = event.context.answerHeaders ?? []
  return fastJsonText(status, json, more.length ? [...cors, ...more] : cors)
}

export const invalidCapture = (problems: string[]) => apiError(400, { message: problems.join('; '), errors: problems })

/**
 * The visitor a server-side worker forwards: the body's address and user agent with the site's worker secret, else
 * the request's own (the worker's); a secret that is given and wrong is a 401.
 */
export function workerVisitor(event: H3Event, body: { ip: string, userAgent: string }, trustProxy: TrustProxy): Visitor {
  return workerTrusted(event, captureSite(event)) ? { ip: body.ip, userAgent: body.userAgent } : requestVisitor(event, trustProxy)
}

/** The worker's secret: absent → the body's IP is not believed; present and wrong → 401. */
function workerTrusted(event: H3Event, site: ActiveSite): boolean {
  const expected = site.config.capture.workerSecret
  const given = event.req.headers.get(WORKER_SECRET_HEADER)
  if (!expected || given === null) {
    if (given !== null) throw apiError(401, { message: `This site has no capture.workerSecret; remove the ${WORKER_SECRET_HEADER} header or configure one` })
    return false
  }
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw apiError(401, { message: `Wrong ${WORKER_SECRET_HEADER}` })
  return true
}
