/**
 * What each event of a site does at each of its platforms, decided by the code that decides deliveries: the event's
 * mapping (mapping.ts), the fan-out (decide.ts `decideDelivery`) and each platform's verdict on the event
 * (platform-verdict.ts, the outbox's own check). The dashboard's Setup page shows it; nothing here is stored.
 */
import { STANDARD_EVENTS } from '../config/schema.ts'
import type { AdPlatformDefinition, Registry } from '../registry.ts'
import type { ActiveSite } from '../sites/directory.ts'
import { decideDelivery } from './decide.ts'
import { resolveEvent } from './mapping.ts'
import { platformVerdict } from './platform-verdict.ts'
import { planSample } from './sample-event.ts'
import type { StandardEvent } from './types.ts'

export type PlatformStep =
  | { kind: 'send', as: StandardEvent }
  | { kind: 'skip', reason: string }

export interface EventPlanRow {
  key: string
  name: string
  release: 'immediately' | 'when_qualified'
  /** The standard event it is delivered as; null for one that sends as nothing. */
  standardEvent: StandardEvent | null
  /** Why nothing goes to any platform (an event that sends as nothing); unset when the platforms decide. */
  nowhere?: string
  /** One step per platform of the site, in config order. */
  steps: { platform: string, label: string, step: PlatformStep }[]
}

/** The standard events, then the site's own active events: each as a conversion with a click id and an email would go. */
export function planSiteEvents(site: ActiveSite, registry: Registry, now = new Date()): EventPlanRow[] {
  const configured = registry.forSite(site.id, 'ad-platform')
  const platforms = configured.map((c) => c.definition.name)
  const events = [
    ...STANDARD_EVENTS.map((key) => ({ key: key as string, name: key as string })),
    ...site.config.events.filter((e) => e.active).map((e) => ({ key: e.key, name: e.name })),
  ]
  return events.map(({ key, name }) => {
    const mapping = resolveEvent(site.config, key)
    // A consenting, human visitor's conversion, sent by a trusted source: only the configuration decides.
    const plan = decideDelivery({
      mapping, hold: false, match: { isBot: false, consent: 'granted' }, platforms, trust: 'trusted', chosenId: false,
      deliver: 'background', publicGraceSeconds: 0,
    })
    const release = mapping.kind === 'mapped' ? mapping.release : 'immediately'
    if (!plan.standardEvent) return { key, name, release, standardEvent: null, nowhere: 'sends as no standard event (sendsAs is null): stored, delivered nowhere', steps: [] }
    const standardEvent = plan.standardEvent
    const sample = planSample(site.id, site.config, standardEvent, now)
    const steps = configured.filter((c) => plan.providers.includes(c.definition.name)).map(({ definition, options }) => {
      const platform = definition as AdPlatformDefinition<unknown>
      const verdict = platformVerdict(platform, options, sample, now.getTime())
      const step: PlatformStep = verdict.kind === 'send' ? { kind: 'send', as: standardEvent } : { kind: 'skip', reason: verdict.reason }
      return { platform: platform.name, label: platform.label ?? platform.name, step }
    })
    return { key, name, release, standardEvent, steps }
  })
}
