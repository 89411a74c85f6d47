import type { H3Event } from 'h3'

/** What a request no route matched is called (a 404, or a path the first-party host serves by itself). */
export const UNMATCHED_ROUTE = '(unmatched)'

/**
 * The route pattern a request matched (`/api/v1/crm-release/:api_key/:secret`), never its path: paths hold keys and
 * the release secret, so logs, error reports and metric labels name the pattern only.
 */
export function routePattern(event: H3Event): string {
  return event.context.matchedRoute?.route ?? UNMATCHED_ROUTE
}
