import { sqlTime } from '../paging/instant.ts'
import { sqlPageOrder, sqlPageRange, type PagedList } from '../paging/page.ts'
import type { Horizon } from '../paging/horizon.ts'
import { BotDetectionRecord } from '../fields.ts'

/** Visits ruled bots, paged on the visit's start time over the partial index of bot visits. */
export function botDetectionsList(horizon: Horizon): PagedList {
  return {
    path: '/api/v1/export/bot-detections',
    summary: 'Bot detections',
    description: 'One record per visit ruled a bot, ordered by the visit\'s start time (`detected_at`). Paged like sessions.',
    record: BotDetectionRecord,
    timeField: 'detected_at',
    horizon,
    statement: {
      name: 'dcgate_export_bot_detections_v1',
      text: `select v.id as paging_id, v.session_id, v.bot_reasons, v.user_agent, v.country, v.ip_address, v.is_vpn, v.is_proxy,
          ${sqlTime('v.started_at')} as detected_at
        from visits v
        where v.site_id = $1 and v.is_bot and ${sqlPageRange('v.started_at', 'v.id')}
        ${sqlPageOrder('v.started_at', 'v.id')}`,
    },
  }
}
