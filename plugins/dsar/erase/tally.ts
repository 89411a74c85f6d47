import type { EraseRequest } from './person.ts'

/**
 * Records erased per data area, collected while the `dsar:erase` hook runs. The hook carries no counts, so the
 * dsar plugin keys a tally by the very request object it passes to the hook; its own listeners add to it. A hook
 * called by anyone else (a test, another plugin) has no tally and the listeners only erase.
 */
export type Tally = Record<string, number>

const tallies = new WeakMap<EraseRequest, Tally>()

export function startTally(request: EraseRequest): Tally {
  const tally: Tally = {}
  tallies.set(request, tally)
  return tally
}

export function count(request: EraseRequest, area: string, records: number): void {
  const tally = tallies.get(request)
  if (tally) tally[area] = (tally[area] ?? 0) + records
}
