import type * as Undici from 'undici'

let undici: Promise<typeof Undici> | undefined

/**
 * undici's request(), loaded with the first call: its 1.1 MB of source is memory that a server which delivers
 * nothing (tracking only, or idle) never needs (issue 26). request() rather than fetch(): the same keep-alive pool
 * without WHATWG streams, measured at a noticeable share of the intake's CPU in test/bench/conversions.bench.ts.
 */
export const httpRequest = (async (...args: Parameters<typeof Undici.request>) => {
  const { request } = await (undici ??= import('undici'))
  return request(...args)
}) as typeof Undici.request
