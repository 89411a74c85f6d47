import { BOT_DETECTIONS_PAGE } from '../queries/lists.ts'
import type { PagedList } from '../paging/page.ts'
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
    statement: BOT_DETECTIONS_PAGE,
  }
}
