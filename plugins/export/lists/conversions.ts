import { CONVERSIONS_PAGE } from '../queries/lists.ts'
import type { PagedList } from '../paging/page.ts'
import type { Horizon } from '../paging/horizon.ts'
import { ConversionRecord } from '../fields.ts'

/**
 * Validated conversions, folded (docs/api/export.md, "Folding"): one delivery is logged per platform; every
 * delivery of a conversion is written in one statement, so they share one `created_at`, and the conversion's row
 * is keyed (created_at, conversion id). It is listed once one of them is sent and shows the first delivery sent.
 * Conversions sharing an order id make one row: the one with the lowest key among those delivered. A public
 * conversion (pixel, unsigned webhook) never hides a trusted one: anyone can send a public event with a shop's order
 * id and a made-up value. The page walks the partial index of sent deliveries in key order; the fold looks up the
 * few conversions of the same order id.
 */
export function conversionsList(horizon: Horizon): PagedList {
  return {
    path: '/api/v1/export/conversions',
    summary: 'Validated conversions',
    description: 'Conversions that passed the bot and consent gates and were delivered, one row per order id, ordered by `created_at`. Paged like sessions.',
    record: ConversionRecord,
    timeField: 'created_at',
    horizon,
    statement: CONVERSIONS_PAGE,
  }
}
