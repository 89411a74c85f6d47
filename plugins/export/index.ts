import { definePlugin } from '../../core/plugin.ts'
import { addHealthRoute } from './health.ts'
import { addEventsRoute } from './lists/events.ts'
import { conversionsList } from './lists/conversions.ts'
import { identifiedUsersList } from './lists/identified-users.ts'
import { sessionsList } from './lists/sessions.ts'
import { botDetectionsList } from './lists/bot-detections.ts'
import { vpnProxyDetectionsList } from './lists/vpn-proxy-detections.ts'
import { createHorizons } from './paging/horizon.ts'
import { addPagedList } from './paging/page.ts'

/**
 * The export API (docs/api/export.md): the health check, the configured events, and five time-paged lists that
 * return every record exactly once to a client following `next_since`, however many records share a timestamp.
 */
export default definePlugin({
  name: 'export',
  setup({ routes, prepared, config }) {
    const horizons = createHorizons(prepared, config)
    addHealthRoute(routes, prepared)
    // In the spec's order (Endpoints, Summary), which is also the order of /openapi.json.
    addPagedList(routes, prepared, conversionsList(horizons.deliveries))
    addPagedList(routes, prepared, identifiedUsersList(horizons.database))
    addEventsRoute(routes)
    for (const list of [sessionsList, botDetectionsList, vpnProxyDetectionsList]) addPagedList(routes, prepared, list(horizons.visits))
  },
})
