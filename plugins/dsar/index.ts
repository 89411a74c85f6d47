import { createMailer } from '../../core/mail/mailer.ts'
import { definePlugin } from '../../core/plugin.ts'
import { DeletionRequest } from './entities.ts'
import { addConversionEraser } from './erase/conversions.ts'
import { addIdentifiedUserEraser } from './erase/identified-users.ts'
import { addOutboxEraser } from './erase/outbox.ts'
import { addVisitEraser } from './erase/visits.ts'
import { scheduleDsarJobs } from './jobs.ts'
import { addConfirmRoute } from './routes/confirm.ts'
import { addEmbedRoute } from './routes/embed.ts'
import { addPrivateRoute } from './routes/private.ts'
import { addProofRoutes } from './routes/proof.ts'
import { addPublicRequestRoute } from './routes/public-request.ts'
import { createDsar } from './service.ts'

/**
 * Data deletion (DSAR, docs/data-deletion.md): the public request with email confirmation, the private route,
 * the proof and status page, the drop-in form, the hard purge. The erasure itself runs through `dsar:erase`, where
 * every plugin erases its own data; this plugin erases the kernel's (identified users, visits and their events,
 * conversions' stored identity) and the mails it wrote to the outbox, which no other plugin owns.
 */
export default definePlugin({
  name: 'dsar',
  entities: [DeletionRequest],
  setup(ctx) {
    // Order matters: conversions find the person's visits by their email before the visits lose it.
    addConversionEraser(ctx)
    addVisitEraser(ctx)
    addIdentifiedUserEraser(ctx)

    const mailer = createMailer(ctx.config, ctx.logger)
    addOutboxEraser(ctx, mailer)
    const dsar = createDsar(ctx, mailer)
    addPublicRequestRoute(ctx, dsar)
    addConfirmRoute(ctx, dsar)
    addPrivateRoute(ctx, dsar)
    addProofRoutes(ctx, dsar)
    addEmbedRoute(ctx)

    scheduleDsarJobs(ctx, dsar)
    ctx.hooks.hook('app:close', async () => {
      await dsar.settle()
      mailer.close()
    })
  },
})
