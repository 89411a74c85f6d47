import { join } from 'node:path'
import { definePlugin } from '../../core/plugin.ts'
import { metrics } from '../../core/metrics/registry.ts'
import { installFirstParty } from './first-party/install.ts'
import { createVisitIntel } from './intel/index.ts'
import { addCollectRoutes } from './routes/collect.ts'
import { addIdentifyRoute } from './routes/identify.ts'
import { addPreflightRoutes } from './routes/preflight.ts'
import { createRetention, RETENTION_EVERY_MS } from './retention.ts'
import { makePartitionsAhead } from './retention-partitions.ts'
import { PARTITIONS_EVERY_MS } from './store/partitions.ts'
import { addScriptRoute } from './routes/script.ts'
import { createCaptureWriter } from './store/writer.ts'
import { addDeadLetterEraser } from './erase.ts'
import { CaptureOptions } from './options.ts'
import { IdentifiedUser, PageEvent, Visit } from './entities.ts'

/**
 * Capture: the tracking script and what it sends. GET /script, POST /collect, /identify and /collect/worker;
 * hits are journaled and written in batches; identified users and pixel conversions; first-party serving; the
 * retention of what it stored.
 */
export default definePlugin({
  name: 'capture',
  options: CaptureOptions,
  entities: [Visit, PageEvent, IdentifiedUser],
  async setup(ctx, options) {
    const { config, logger } = ctx
    const intel = await createVisitIntel({ geoDatabase: options.geoDatabase, dataDir: config.dataDir, logger })
    for (const [name, info] of Object.entries(intel.dataInfo)) logger.info(`capture: ${name} data ${info.source}${info.date ? ` (${info.date})` : ''}`)
    const deadLetterDir = join(config.dataDir, 'capture-dead-letter')
    const writer = createCaptureWriter({
      prepared: ctx.prepared,
      journalDir: join(config.dataDir, 'capture-journal'),
      deadLetterDir,
      flushSize: options.flushSize,
      flushIntervalMs: options.flushIntervalMs,
      maxPendingBytes: options.maxPendingMb * 1024 * 1024,
      logger,
      onError: (error) => {
        logger.warn('capture: a batch could not be written; it is kept for the next flush')
        ctx.report(error, { source: 'capture' })
      },
    })
    await writer.start()
    addDeadLetterEraser(ctx, deadLetterDir)
    ctx.hooks.hook('app:close', () => writer.stop())
    ctx.hooks.hook('metrics:collect', () => {
      metrics.captureQueued.set(writer.queuedHits)
      metrics.captureJournalBytes.set(writer.journalBytes)
      metrics.captureDeadLettered.set(writer.deadLettered)
    })
    const retention = createRetention(ctx, options.retentionDays)
    // Not at start: its first turn comes at the scheduler's first check, after start-up rather than during it.
    ctx.schedule({ name: 'capture:retention', everyMs: RETENTION_EVERY_MS, atStart: false, run: () => retention.run() })
    // At start too: a server down for longer than the week made ahead gets its days back before hits fill the default partition.
    ctx.schedule({ name: 'capture:partitions', everyMs: PARTITIONS_EVERY_MS, run: () => makePartitionsAhead(ctx) })

    const firstParty = installFirstParty(ctx, options)
    addScriptRoute(ctx)
    addCollectRoutes({ ctx, intel, writer, firstParty, caps: { perRequest: options.conversionsPerRequest, perVisit: options.conversionsPerVisit } })
    addIdentifyRoute(ctx, intel)
    addPreflightRoutes(ctx)
  },
})
