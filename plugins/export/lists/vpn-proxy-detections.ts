import { sqlTime } from '../paging/instant.ts'
import { sqlPageOrder, sqlPageRange, type PagedList } from '../paging/page.ts'
import type { Horizon } from '../paging/horizon.ts'
import { VpnProxyDetectionRecord } from '../fields.ts'

/** Visits behind a VPN, proxy or Tor, paged on the visit's start time over their partial index. */
export function vpnProxyDetectionsList(horizon: Horizon): PagedList {
  return {
    path: '/api/v1/export/vpn-proxy-detections',
    summary: 'VPN and proxy detections',
    description: 'One record per visit behind a VPN, proxy or Tor, ordered by the visit\'s start time (`detected_at`). Paged like sessions.',
    record: VpnProxyDetectionRecord,
    timeField: 'detected_at',
    horizon,
    statement: {
      name: 'dcgate_export_vpn_proxy_detections_v1',
      // The condition is written as the partial index's predicate, so the planner uses that index.
      text: `select v.id as paging_id, v.session_id, v.ip_address, v.is_vpn, v.is_proxy, v.is_tor, v.isp, v.organization, v.country,
          ${sqlTime('v.started_at')} as detected_at
        from visits v
        where v.site_id = $1 and (v.is_vpn or v.is_proxy or v.is_tor) and ${sqlPageRange('v.started_at', 'v.id')}
        ${sqlPageOrder('v.started_at', 'v.id')}`,
    },
  }
}
