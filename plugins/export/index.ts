import * as v from 'valibot'
import { definePlugin } from '../../core/plugin.ts'

const HealthResponse = v.object({
  success: v.literal(true),
  app_id: v.pipe(v.string(), v.description('The website the key belongs to.')),
  identified_user_count: v.pipe(v.number(), v.integer(), v.description('Identified users stored for the website.')),
})

/**
 * The export API. This first slice is the health check; the time-paged lists join it in the export issue.
 * Identified users arrive with the capture plugin; until then the count is 0.
 */
export default definePlugin({
  name: 'export',
  setup({ routes }) {
    routes.add({
      method: 'GET',
      path: '/api/v1/export/health',
      auth: 'key',
      summary: 'Check a private key',
      description: 'Answers 200 with the website the key belongs to; a quick way to test a new key.',
      tags: ['Export'],
      responses: { 200: HealthResponse },
      handler: (event) => ({ success: true, app_id: event.context.site!.id, identified_user_count: 0 }),
    })
  },
})
