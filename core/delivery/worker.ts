import type { Outbox } from './outbox.ts'

const BATCH = 20

export interface DeliveryWorker {
  start: () => void
  /** Stops polling and waits for the deliveries in hand. */
  stop: () => Promise<void>
}

/**
 * Polls the outbox for due deliveries (retries, and anything a crashed process left claimed once its lease
 * ran out). Every instance runs one; the claim query skips rows another worker holds.
 */
export function createDeliveryWorker(outbox: Outbox, intervalMs: number, onError: (error: unknown) => void): DeliveryWorker {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  const tick = () => {
    running ??= (async () => {
      try {
        while (await outbox.runDue(BATCH) === BATCH && timer) { /* drain a backlog before sleeping */ }
      }
      catch (error) {
        onError(error)
      }
      finally {
        running = undefined
      }
    })()
  }
  return {
    start() {
      timer ??= setInterval(tick, intervalMs)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      timer = undefined
      await running
    },
  }
}
