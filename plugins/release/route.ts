import { timingSafeEqual } from 'node:crypto'
import * as v from 'valibot'
import { apiError } from '../../core/http/errors.ts'
import type { PluginContext } from '../../core/plugin.ts'
import { releaseHeld } from './release-held.ts'
import type { ReleaseOptions } from './options.ts'

const failure = (status: number, message: string) => apiError(status, { success: false, message })

const ReleaseBody = v.object({
  event_name: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'is required')),
  email: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'is required')),
})

const ReleaseAnswer = v.object({ success: v.literal(true), message: v.string(), releasedCount: v.number() })

/** POST /api/v1/crm-release/:api_key/:secret (spec: "Release endpoint"). */
export function addReleaseRoute(ctx: PluginContext, options: ReleaseOptions): void {
  // The spec answers a URL with a part missing with 400, not the router's 404.
  for (const partial of ['/api/v1/crm-release', '/api/v1/crm-release/:api_key']) {
    ctx.app.post(partial, () => {
      throw failure(400, 'The URL needs the api_key and the secret: /api/v1/crm-release/<api_key>/<secret>')
    })
  }
  ctx.routes.add({
    method: 'POST',
    path: '/api/v1/crm-release/:api_key/:secret',
    auth: 'none',
    summary: 'Release held conversions: the lead is qualified',
    description: 'cop_key and the release secret in the path (dcgate sites show). Every conversion held for this event and email is sent, oldest first, as crm_qualified. 404 when nothing is held.',
    tags: ['Qualification gate'],
    params: v.object({ api_key: v.string(), secret: v.string() }),
    body: ReleaseBody,
    responses: { 200: ReleaseAnswer, 404: { description: 'Nothing held for this event and email (never captured, already released, or expired)' } },
    precheck: (event) => {
      const params = event.context.params ?? {}
      if (!params.api_key || !params.secret) throw failure(400, 'The URL needs the api_key and the secret: /api/v1/crm-release/<api_key>/<secret>')
      const site = ctx.sites.byCopKey(decodeURIComponent(params.api_key))
      if (!site) throw failure(401, 'Invalid api_key')
      if (!secretMatches(decodeURIComponent(params.secret), site.releaseSecret)) throw failure(401, 'Invalid secret')
      // A paused site sends nothing: its held conversions stay held until it is active again.
      if (site.status === 'paused') throw apiError(402, { success: false, message: 'This site is paused; nothing was released', code: 'APP_INACTIVE' })
      event.context.releaseSiteId = site.id
    },
    invalid: (problems) => failure(400, problems.join('; ')),
    handler: async (event, { body }) => {
      const site = ctx.sites.byId(event.context.releaseSiteId!)!
      const result = await releaseHeld(ctx, site, body.event_name, body.email, options.expireAfterDays)
      if (result.released.length === 0) throw failure(404, `Nothing is held for "${body.event_name}" and this email (never captured, already released, or expired)`)
      const count = result.released.length
      const what = `Released ${count} held conversion${count === 1 ? '' : 's'}`
      const message = result.platforms === 0
        ? `${what}; no ad platform is connected to this site, so nothing was sent`
        : `${what} to ${result.platforms} ad platform${result.platforms === 1 ? '' : 's'}; see the delivery report for each delivery`
      return { success: true, message, releasedCount: count }
    },
  })
}

declare module 'h3' {
  interface H3EventContext {
    releaseSiteId?: string
  }
}

function secretMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  // Compared in constant time; a length difference is answered without comparing (it reveals only the length).
  return a.length === b.length && timingSafeEqual(a, b)
}
