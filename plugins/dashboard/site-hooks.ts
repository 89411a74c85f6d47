import type { PluginContext } from '../../core/plugin.ts'
import type { EditOutcome, SiteEdits } from './site-edits.ts'

/** A connection the site could not take: the site is the config file's, or the options are invalid (the loader's lines). */
export class SiteEditRefused extends Error {
  override name = 'SiteEditRefused'
  readonly problems: readonly string[]
  constructor(problems: readonly string[]) {
    super(problems.join('; '))
    this.problems = problems
  }
}

/**
 * The "Connect" and "Disconnect" buttons (plugins/dashboard/connect/) end in these hooks: the destination is set on, or removed
 * from, the site made in the dashboard (validated, applied on every instance, audited). A config-file site is
 * read-only: the listener throws SiteEditRefused, as it does for options the platform's schema refuses.
 */
export function listenForConnections(ctx: PluginContext, edits: SiteEdits): void {
  ctx.hooks.hook('dashboard:destination-connected', async ({ siteId, platform, options, actor }) => {
    refuseUnlessSaved(await edits.setDestination(siteId, platform, options, actor))
  })
  ctx.hooks.hook('dashboard:destination-disconnected', async ({ siteId, platform, actor }) => {
    refuseUnlessSaved(await edits.removeDestination(siteId, platform, actor))
  })
}

function refuseUnlessSaved(outcome: EditOutcome): void {
  if (!outcome.ok) throw new SiteEditRefused(outcome.problems)
}
