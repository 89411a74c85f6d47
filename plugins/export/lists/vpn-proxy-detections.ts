import { VPN_PROXY_DETECTIONS_PAGE } from '../queries/lists.ts'
import type { PagedList } from '../paging/page.ts'
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
    statement: VPN_PROXY_DETECTIONS_PAGE,
  }
}
