import type { PluginContext } from '../../core/plugin.ts'
import type { SaveOutcome, SiteInput } from '../../core/sites/managed.ts'
import type { Viewer } from './page.ts'
import { insertAudit } from './queries/audit.ts'

/** A site edit refused as a whole: the site is the config file's, or not one made in the dashboard. */
export type EditOutcome = SaveOutcome | { ok: false, readOnly: true, problems: string[] }

export const READ_ONLY = 'This site is managed in the config file; change it there.'

/**
 * Every change to a site made in the dashboard goes through here: validated as at start-up (core/sites/managed.ts),
 * applied on every instance, and written to the audit log (never a secret: only which parts changed).
 */
export interface SiteEdits {
  create: (input: SiteInput, actor: Viewer | string) => Promise<SaveOutcome>
  /** Applies `change` to the stored site; `what` names the change in the audit log ("edited site", detail). */
  update: (siteId: string, change: (input: SiteInput) => SiteInput, actor: Viewer | string, what: { action: string, detail?: string }) => Promise<EditOutcome>
  /** `destinations[platform] = options` (`crm[platform]` for a CRM poller): a "Connect" finished, or options entered in the form. */
  setDestination: (siteId: string, platform: string, options: Record<string, unknown>, actor: Viewer | string) => Promise<EditOutcome>
  /** Removes `destinations[platform]` (the site page's "Remove", or "Disconnect"). */
  removeDestination: (siteId: string, platform: string, actor: Viewer | string) => Promise<EditOutcome>
}

export function createSiteEdits(ctx: PluginContext): SiteEdits {
  const managed = ctx.managedSites
  const audit = (actor: Viewer | string, siteId: string, action: string, detail?: string) =>
    insertAudit(ctx.prepared, { siteId, actor: labelOf(actor), action, detail })
  const update: SiteEdits['update'] = async (siteId, change, actor, what) => {
    const stored = await managed.read(siteId)
    if (!stored) return { ok: false, readOnly: true, problems: [ctx.sites.byId(siteId) ? READ_ONLY : 'No site made in the dashboard has this id.'] }
    const outcome = await managed.save(change(structuredClone(stored)), labelOf(actor), 'update')
    if (outcome.ok) await audit(actor, siteId, what.action, what.detail)
    return outcome
  }
  const section = (input: SiteInput, key: 'destinations' | 'sources' | 'crm') => ({ ...(input[key] as Record<string, unknown> | undefined) })
  // A connected CRM (Salesforce, HubSpot) is a poller: its options go under `crm`, an ad platform's under `destinations`.
  const sectionOf = (platform: string) => (ctx.registry.get('crm-poller', platform) ? 'crm' as const : 'destinations' as const)
  return {
    async create(input, actor) {
      const outcome = await managed.save(input, labelOf(actor), 'create')
      if (outcome.ok) await audit(actor, input.id, 'created site', input.id)
      return outcome
    },
    update,
    setDestination: (siteId, platform, options, actor) => update(siteId, (input) => ({
      ...input, [sectionOf(platform)]: { ...section(input, sectionOf(platform)), [platform]: options },
    }), actor, { action: 'set destination', detail: platform }),
    removeDestination: (siteId, platform, actor) => update(siteId, (input) => {
      const kept = section(input, sectionOf(platform))
      delete kept[platform]
      return { ...input, [sectionOf(platform)]: kept }
    }, actor, { action: 'removed destination', detail: platform }),
  }
}

function labelOf(actor: Viewer | string): string {
  return typeof actor === 'string' ? actor : actor.label
}
