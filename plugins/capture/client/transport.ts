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

/** Public suffixes a first-party host's parent may look like (shop.co.uk's co.uk): the server sets no cookie there. */
const SECOND_LEVEL_SUFFIX = /^(ac|co|com|edu|gob|gov|go|ltd|mil|ne|net|nic|or|org|plc|sch)\.[a-z]{2}$/

/**
 * Whether requests to `host` are of the page's own site: the same host, or a sibling under the host's parent
 * (t.shop.example for www.shop.example). Only such a host, the site's first-party host, sets the visitor cookie;
 * the server's `plugins/capture/first-party/cookie.ts` cookieDomain draws the same line. Pure.
 */
export function sameSite(host: string, pageHost: string): boolean {
  if (host === pageHost) return true
  const parent = host.slice(host.indexOf('.') + 1)
  return parent.includes('.') && !SECOND_LEVEL_SUFFIX.test(parent) && (pageHost === parent || pageHost.endsWith(`.${parent}`))
}

/**
 * The credentials of a request to `url`: only a host of the page's own site gets cookies, where the first-party
 * visitor cookie (set by /collect) is kept; a credentialed answer from elsewhere would be readable only if the server
 * allowed credentials for this page, which it does not for a site without domains. In the ids chunk: before
 * identifiers are allowed, every request omits them.
 */
export function credentialsFor(url: string): RequestCredentials {
  return sameSite(new URL(url).hostname, location.hostname) ? 'include' : 'omit'
}

/**
 * POSTs a JSON body. On page unload it uses navigator.sendBeacon (no answer); otherwise fetch with keepalive,
 * resolving to the parsed answer (or undefined on any failure: nothing is ever thrown into the page).
 */
export async function post(url: string, body: unknown, unloading = false, credentials: RequestCredentials = 'omit', retried = false): Promise<unknown> {
  try {
    const json = JSON.stringify(body)
    if (unloading && navigator.sendBeacon?.(url, new Blob([json], { type: 'text/plain' }))) return undefined
    const response = await fetch(url, { method: 'POST', body: json, keepalive: true, credentials, headers: { 'content-type': 'text/plain' } })
    if (response.ok) return await response.json()
    // 503: the server recorded nothing and asks for a later try (its database is catching up): one more, while the page lives.
    if (response.status !== 503 || retried) return undefined
    const seconds = Math.min(Number(response.headers.get('retry-after')) || 5, 60)
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
    return await post(url, body, false, credentials, true)
  } catch {
    return undefined
  }
}
