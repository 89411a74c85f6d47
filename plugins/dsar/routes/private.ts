import * as v from 'valibot'
import { apiError } from '../../../core/http/errors.ts'
import { canonicalEmail, EMAIL_MESSAGE } from '../../../core/identity/email.ts'
import type { PluginContext } from '../../../core/plugin.ts'
import { metrics } from '../../../core/metrics/registry.ts'
import type { Dsar } from '../service.ts'

const failure = (status: number, message: string) => apiError(status, { success: false, message })
/** The spec's "Invalid email", naming the field and the rule; never the value. */
const invalidEmail = () => apiError(400, { success: false, message: 'Invalid email', errors: [`email: ${EMAIL_MESSAGE}`] })

const Answer = v.object({
  success: v.literal(true),
  accepted: v.literal(true),
  confirmation_code: v.string(),
  session_records_anonymised: v.number(),
  status_url: v.string(),
})

/**
 * POST /api/v1/data-deletion (spec): the site owner's own systems erase a person at once. No mail goes to the
 * person (the site owner answers them; the status URL is theirs to pass on), and the email is not kept.
 */
export function addPrivateRoute(ctx: PluginContext, dsar: Dsar): void {
  ctx.routes.add({
    method: 'POST',
    path: '/api/v1/data-deletion',
    auth: 'key',
    summary: 'Erase the data of an email on this site, now',
    description: 'Body {email}. The erasure runs during the call; the answer carries the confirmation code and the public status URL (the proof).',
    tags: ['Data deletion'],
    body: v.object({ email: v.optional(v.unknown()) }),
    responses: { 200: Answer, 400: { description: 'Invalid email' } },
    invalid: (problems) => failure(400, problems.join('; ')),
    handler: async (event, { body }) => {
      const site = event.context.site!
      const email = canonicalEmail(body.email)
      if (!email) throw invalidEmail()
      const row = await dsar.store.createPrivate(site, email)
      metrics.deletionRequests.inc({ channel: 'api' })
      const outcome = await dsar.erase(row.id, 'api')
      if (outcome !== 'completed') throw apiError(500, { success: false, message: `The erasure did not complete; it is retried automatically (confirmation code ${row.code}). Retry the call to be sure.` })
      const done = (await dsar.store.byId(row.id))!
      return {
        success: true,
        accepted: true,
        confirmation_code: done.code,
        session_records_anonymised: done.session_records_anonymised,
        status_url: dsar.statusUrl(done.code),
      }
    },
  })
}
