import { startFakeServer, type FakeServer } from '../fakes/server.ts'
import { startFakeHubspot, type FakeHubspot } from '../fakes/hubspot.ts'

/**
 * A Meta Conversions API stand-in that holds every call open while `hang` is on (so the caller's rows stay leased
 * mid-delivery) and afterwards answers as Meta does. Only answered calls count as accepted.
 */
export interface SlowMeta extends FakeServer {
  hang: boolean
  /** event_ids of the held calls, in order. */
  held: string[]
  /** How often each event_id was accepted (answered 200). */
  accepted: Map<string, number>
  /** Lets the held calls go (their callers are gone by then); for the cleanup. */
  release: () => void
}

export async function startSlowMeta(): Promise<SlowMeta> {
  const waiting: (() => void)[] = []
  const state = { hang: true, held: [] as string[], accepted: new Map<string, number>() }
  const server = await startFakeServer(async (request) => {
    const ids = (JSON.parse(request.body) as { data: { event_id: string }[] }).data.map((event) => event.event_id)
    if (state.hang) {
      state.held.push(...ids)
      await new Promise<void>((resolve) => waiting.push(resolve))
      return { status: 503, body: { error: { message: 'Service temporarily unavailable', type: 'OAuthException', code: 2, is_transient: true, fbtrace_id: 'AbCdEfSlow' } } }
    }
    for (const id of ids) state.accepted.set(id, (state.accepted.get(id) ?? 0) + 1)
    return { status: 200, body: { events_received: ids.length, messages: [], fbtrace_id: 'AbCdEfSlow' } }
  })
  return Object.assign(state, server, {
    release: () => {
      for (const resolve of waiting.splice(0)) resolve()
    },
  })
}

/** The HubSpot fake, with the times at which its search count went up, sampled every 100 ms from now on. */
export async function startWatchedHubspot(): Promise<{ crm: FakeHubspot, pollTimes: number[], stop: () => void }> {
  const crm = await startFakeHubspot()
  const pollTimes: number[] = []
  let seen = 0
  const timer = setInterval(() => {
    // One poll of an empty CRM is one search request; two new ones in one sample are two polls at once.
    for (; seen < crm.searches.length; seen++) pollTimes.push(Date.now())
  }, 100)
  return { crm, pollTimes, stop: () => clearInterval(timer) }
}
