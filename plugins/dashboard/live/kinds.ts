/** Which requests the live events show, by route pattern, and what the page calls each kind. */

export const LIVE_KINDS = [
  { key: 'hit', label: 'Tracking hit' },
  { key: 'identify', label: 'Identify' },
  { key: 'conversion', label: 'Conversion' },
  { key: 'segment', label: 'Segment message' },
  { key: 'webhook', label: 'Webhook' },
] as const

export type LiveKind = typeof LIVE_KINDS[number]['key']

const BY_ROUTE: Readonly<Record<string, LiveKind>> = {
  '/collect': 'hit',
  '/collect/worker': 'hit',
  '/identify': 'identify',
  '/identify/worker': 'identify',
  '/api/v1/conversions/automation': 'conversion',
  '/v1/track': 'segment',
  '/v1/identify': 'segment',
  '/v1/page': 'segment',
  '/v1/batch': 'segment',
  '/api/v1/conversions/:source/:api_key': 'webhook',
}

/** The kind of a route's requests; undefined for a route the live events leave out (exports, keys, the script). */
export function kindOfRoute(route: string): LiveKind | undefined {
  return BY_ROUTE[route]
}

export function kindLabel(kind: string): string {
  return LIVE_KINDS.find((k) => k.key === kind)?.label ?? kind
}
