/**
 * Groups work that arrives close together into one call per key: an item waits while its key already has
 * `maxInFlight` calls running (or its request budget is spent), and whatever gathered meanwhile goes out together,
 * up to `maxBatch(key)` items. Items given within `lingerMs` of each other go together as well. Under load the
 * batches grow by themselves while calls are in flight; the linger only groups what arrives close together.
 */
export interface BatcherOptions<I, R> {
  /** Calls running at once per key. */
  maxInFlight: number
  /**
   * How long the first item of a batch waits for others before its call goes out, in ms (0: the same turn of the
   * event loop only). Concurrent requests a few milliseconds apart then share a call even when none is in flight.
   */
  lingerMs?: number
  /** Most items one call takes for this key (at least 1). */
  maxBatch: (key: string) => number
  /**
   * Asked before each call: 0 to go now, else the milliseconds to wait before asking again (a request budget used
   * up). Never rejects; a budget that cannot be read lets the call go.
   */
  wait?: (key: string) => Promise<number>
  /** One call for the items, in order; resolves with one result per item. A rejection fails every item of it. */
  run: (key: string, items: I[]) => Promise<R[]>
  /** The result of an item whose patience (see `add`) the budget's wait would exceed: it is not sent by this batcher. */
  defer?: (item: I, waitMs: number) => R
}

export interface Batcher<I, R> {
  /**
   * Resolves with the item's own result once its batch has run; or, when the request budget would keep it waiting
   * longer than `patienceMs` (default: no limit), at once with `defer`'s result.
   */
  add: (key: string, item: I, patienceMs?: number) => Promise<R>
  /** Items waiting for a call of this key (not those in flight). */
  waiting: (key: string) => number
}

interface Waiting<I, R> { item: I, deadline: number, resolve: (result: R) => void, reject: (error: unknown) => void }

interface KeyState<I, R> {
  queue: Waiting<I, R>[]
  inFlight: number
  /** A drain is already scheduled (next turn of the loop, or after the linger or the budget's wait). */
  scheduled: boolean
  timer?: NodeJS.Timeout
}

export function createBatcher<I, R>(options: BatcherOptions<I, R>): Batcher<I, R> {
  const keys = new Map<string, KeyState<I, R>>()

  const schedule = (key: string, state: KeyState<I, R>, afterMs = 0) => {
    if (state.scheduled && !(afterMs === 0 && state.timer)) return
    // A drain now replaces one waiting on a timer (a batch filled up during its linger).
    if (state.timer) clearTimeout(state.timer)
    state.timer = undefined
    state.scheduled = true
    const go = () => {
      state.scheduled = false
      state.timer = undefined
      void drain(key, state)
    }
    if (afterMs > 0) state.timer = setTimeout(go, afterMs)
    else setImmediate(go)
  }

  const drain = async (key: string, state: KeyState<I, R>): Promise<void> => {
    while (state.queue.length > 0 && state.inFlight < options.maxInFlight) {
      // Taken before the budget is asked, so another drain of this key cannot send the same turn twice.
      state.inFlight++
      const waitMs = options.wait ? await options.wait(key).catch(() => 0) : 0
      if (waitMs > 0) {
        state.inFlight--
        if (options.defer) deferImpatient(state, waitMs, options.defer)
        if (state.queue.length > 0) schedule(key, state, waitMs)
        return
      }
      const batch = state.queue.splice(0, Math.max(1, options.maxBatch(key)))
      if (batch.length === 0) {
        // Another drain of this key took the rest while this one waited for the budget.
        state.inFlight--
        return
      }
      void call(key, state, batch)
    }
  }

  const deferImpatient = (state: KeyState<I, R>, waitMs: number, defer: (item: I, waitMs: number) => R) => {
    const cutoff = Date.now() + waitMs
    const impatient = state.queue.filter((w) => w.deadline < cutoff)
    if (impatient.length === 0) return
    state.queue = state.queue.filter((w) => w.deadline >= cutoff)
    for (const w of impatient) w.resolve(defer(w.item, waitMs))
  }

  const call = async (key: string, state: KeyState<I, R>, batch: Waiting<I, R>[]) => {
    try {
      const results = await options.run(key, batch.map((w) => w.item))
      batch.forEach((w, i) => w.resolve(results[i]!))
    }
    catch (error) {
      for (const w of batch) w.reject(error)
    }
    finally {
      state.inFlight--
      if (state.queue.length > 0) schedule(key, state)
      else if (state.inFlight === 0 && !state.scheduled) keys.delete(key)
    }
  }

  return {
    add(key, item, patienceMs = Number.POSITIVE_INFINITY) {
      let state = keys.get(key)
      if (!state) keys.set(key, state = { queue: [], inFlight: 0, scheduled: false })
      const result = new Promise<R>((resolve, reject) => state.queue.push({ item, deadline: Date.now() + patienceMs, resolve, reject }))
      // A full batch goes at once; otherwise the first item waits the linger for company.
      schedule(key, state, state.queue.length >= options.maxBatch(key) ? 0 : options.lingerMs ?? 0)
      return result
    },
    waiting: (key) => keys.get(key)?.queue.length ?? 0,
  }
}
