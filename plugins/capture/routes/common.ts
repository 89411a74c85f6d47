import type { H3Event } from 'h3'
import * as v from 'valibot'
import { fastJson } from '../../../core/http/answer.ts'
import { apiError } from '../../../core/http/errors.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import type { ActiveSite } from '../../../core/sites/directory.ts'
import { corsHeaders, originAllowed } from '../request.ts'

export const CopKeyQuery = v.looseObject({ cop_key: v.pipe(v.string('is required'), v.minLength(1, 'is required'), v.maxLength(128)) })

declare module 'h3' {
  interface H3EventContext {
    /** The site of a capture request's cop_key (set by capturePrecheck). */
    captureSite?: ActiveSite
  }
}

/**
 * Before the body is read: the cop_key names an active site (404 otherwise, 402 for a paused one), and a browser
 * origin is one of the site's domains (403 otherwise). Chooses the CORS headers every answer then carries.
 */
export function capturePrecheck(ctx: PluginContext) {
  return (event: H3Event) => {
    const copKey = event.url.searchParams.get('cop_key')
    const site = copKey ? ctx.sites.byCopKey(copKey) : undefined
    if (!site) throw apiError(404, { message: copKey ? 'Unknown cop_key' : 'cop_key: is required' })
    const origin = event.req.headers.get('origin')
    if (origin && origin !== 'null' && !originAllowed(origin, site)) {
      throw apiError(403, { message: `Origin ${origin} is not one of the site's domains` })
    }
    event.context.answerHeaders = corsHeaders(origin)
    if (site.status === 'paused') throw apiError(402, { message: 'This site is paused; nothing was recorded', code: 'APP_INACTIVE' })
    event.context.captureSite = site
  }
}

export function captureSite(event: H3Event): ActiveSite {
  return event.context.captureSite!
}

/** A capture route's answer: JSON with the CORS headers the precheck chose, and any more (a cookie). */
export function captureAnswer(event: H3Event, status: number, body: unknown, more: readonly [string, string][] = []): Response {
  const cors = event.context.answerHeaders ?? []
  return fastJson(status, body, more.length ? [...cors, ...more] : cors)
}

export const invalidCapture = (problems: string[]) => apiError(400, { message: problems.join('; '), errors: problems })
