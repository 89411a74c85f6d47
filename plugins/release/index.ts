import { definePlugin } from '../../core/plugin.ts'
import { CrmPollState } from './entities.ts'
import { addHeldAdmin, holdWhenQualified, scheduleExpiry } from './held.ts'
import { actOnHeldLeads } from './lead-action.ts'
import { ReleaseOptions } from './options.ts'
import { addReleaseRoute } from './route.ts'
import { scheduleCrmPollers, tidyIssuedTokens } from './scheduler.ts'

/**
 * The qualification gate: holds the conversions of "when qualified" events (without this plugin nothing is held),
 * releases them (the release endpoint and the CRM pollers), lists and drops them, expires them, and erases them on
 * request.
 */
export default definePlugin({
  name: 'release',
  entities: [CrmPollState],
  options: ReleaseOptions,
  async setup(ctx, options) {
    await tidyIssuedTokens(ctx)
    holdWhenQualified(ctx)
    addReleaseRoute(ctx, options)
    addHeldAdmin(ctx, options)
    actOnHeldLeads(ctx, options)
    scheduleExpiry(ctx, options)
    scheduleCrmPollers(ctx, options)
  },
})
