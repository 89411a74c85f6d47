import * as v from 'valibot'
import { STANDARD_EVENTS } from '../../../core/config/schema.ts'
import type { RouteTable } from '../../../core/http/routes.ts'
import type { SiteConfig } from '../../../core/config/schema.ts'
import { EventRecord } from '../fields.ts'

const STANDARD_NAMES: Record<(typeof STANDARD_EVENTS)[number], string> = {
  Purchase: 'Purchase',
  Lead: 'Lead',
  CompleteRegistration: 'Complete registration',
  Schedule: 'Schedule',
}

/** The four standard events (each sends as itself), then the site's active custom events in config order. */
export function eventsOf(site: SiteConfig): v.InferOutput<typeof EventRecord>[] {
  return [
    ...STANDARD_EVENTS.map((key) => ({ key, name: STANDARD_NAMES[key], source: 'standard' as const, sends_as: key })),
    ...site.events.filter((e) => e.active).map((e) => ({ key: e.key, name: e.name, source: 'site' as const, sends_as: e.sendsAs ?? null })),
  ]
}

export function addEventsRoute(routes: RouteTable): void {
  routes.add({
    method: 'GET',
    path: '/api/v1/export/events',
    auth: 'key',
    summary: 'Configured events',
    description: 'The events a conversion may name: the four standard ones and the site\'s active custom events with the standard conversion each sends as. Not paged.',
    tags: ['Export'],
    responses: { 200: v.object({ success: v.literal(true), data: v.array(EventRecord) }) },
    handler: (event) => ({ success: true, data: eventsOf(event.context.site!.config) }),
  })
}
