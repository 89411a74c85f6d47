import { definePlugin } from '../../core/plugin.ts'
import { CrmPollState } from './entities.ts'
import { addHeldAdmin, startExpiry } from './held.ts'
import { addReleaseRoute } from './route.ts'
import { createCrmScheduler } from './scheduler.ts'
import { ReleaseOptions } from './options.ts'

/**
 * The qualification gate: conversions of "when qualified" events are held by the pipeline; this plugin releases
 * them (the release endpoint and the CRM pollers), lists and drops them, expires them, and erases them on request.
 */
export default definePlugin({
  name: 'release',
  entities: [CrmPollState],
  options: ReleaseOptions,
  setup(ctx) {
    addReleaseRoute(ctx)
    addHeldAdmin(ctx)
    const scheduler = createCrmScheduler(ctx)
    let stopExpiry: (() => void) | undefined
    ctx.hooks.hook('app:ready', () => {
      stopExpiry = startExpiry(ctx)
      scheduler.start()
    })
    ctx.hooks.hook('app:close', async () => {
      stopExpiry?.()
      await scheduler.stop()
    })
  },
})
