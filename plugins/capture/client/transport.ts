/** Batching and sending. Requests are text/plain so the browser sends them without a CORS preflight. */

/** Queues items; flushes them in chunks of at most `max`, `delay` ms after the first one, or at once when full. */
export function createBatcher<T>(send: (items: T[], unloading: boolean) => void, delay = 1000, max = 50) {
  let items: T[] = []
  let timer: ReturnType<typeof setTimeout> | undefined
  const flush = (unloading = false): void => {
    clearTimeout(timer)
    timer = undefined
    const all = items
    items = []
    for (let i = 0; i < all.length; i += max) send(all.slice(i, i + max), unloading)
  }
  return {
    push(item: T): void {
      items.push(item)
      if (items.length >= max) flush()
      else timer ??= setTimeout(flush, delay)
    },
    flush,
  }
}

/**
 * POSTs a JSON body, with credentials so the first-party host's visitor cookie (set by /collect) is kept. On page unload it uses navigator.sendBeacon (no answer); otherwise fetch with keepalive,
 * resolving to the parsed answer (or undefined on any failure: nothing is ever thrown into the page).
 */
export function post(url: string, body: unknown, unloading = false): Promise<unknown> {
  const json = JSON.stringify(body)
  try {
    if (unloading && navigator.sendBeacon && navigator.sendBeacon(url, new Blob([json], { type: 'text/plain' }))) return Promise.resolve(undefined)
    return fetch(url, { method: 'POST', body: json, keepalive: true, credentials: 'include', headers: { 'content-type': 'text/plain' } })
      .then((response) => (response.ok ? response.json() : undefined))
      .catch(() => undefined)
  } catch {
    return Promise.resolve(undefined)
  }
}
