import { sqlTime } from '../paging/instant.ts'
import { sqlPageOrder, sqlPageRange, type PagedList } from '../paging/page.ts'
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
    statement: {
      name: 'dcgate_export_conversions_v2',
      // Planned per call: its joins' best plan depends on how many deliveries and orders the site has.
      reusePlan: false,
      text: `select k.conversion_id as paging_id, c.id, true as validated, coalesce(c.standard_event, c.event) as event_name, r.provider,
          c.value, c.currency, c.order_id, c.country, c.consent = 'granted' as has_consent, false as refunded, null as refunded_at,
          c.confirmation, r.http_status, ${sqlTime('k.created_at')} as created_at, r.id as delivery_id, c.source_event_type,
          c.session_id, c.user_id, c.content_name, c.content_category, r.received as events_received
        from (
          select distinct d.created_at, d.conversion_id from deliveries d
          where d.site_id = $1 and d.status = 'sent' and ${sqlPageRange('d.created_at', 'd.conversion_id')}
          order by d.created_at, d.conversion_id
        ) k
        join conversions c on c.id = k.conversion_id
        cross join lateral (
          select s.id, s.provider, s.http_status, (count(*) over ())::int as received from deliveries s
          where s.conversion_id = c.id and s.status = 'sent' order by s.sent_at nulls last, s.id limit 1
        ) r
        where not c.is_bot and c.consent <> 'denied' and (c.order_id is null or not exists (
          select 1 from conversions o
          where o.site_id = $1 and o.order_id = c.order_id and o.id <> c.id and not o.is_bot and o.consent <> 'denied'
            and (o.trust = 'trusted' or c.trust = 'public')
            and exists (select 1 from deliveries od where od.conversion_id = o.id and od.status = 'sent'
              and (od.created_at, od.conversion_id) < (k.created_at, k.conversion_id))))
        ${sqlPageOrder('k.created_at', 'k.conversion_id')}`,
    },
  }
}
