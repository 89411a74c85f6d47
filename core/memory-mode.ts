// V8's memory saver mode follows the load (docs/architecture.md, "Memory"). The mode keeps an idle server small
// (issue 26), but under load it starts a full collection every half second or so. So a busy process turns it off
// (with a bounded heap growth instead), and one idle for a while turns it back on and collects.
import { performance, type EventLoopUtilization } from 'node:perf_hooks'
import { setFlagsFromString } from 'node:v8'

export type MemoryMode = 'saver' | 'throughput'

/**
 * V8's flags per mode. A busy process lets the old generation grow by 30 % between full collections (what Node 22
 * gets from the start): measured under the conversions benchmark, the saver's server CPU per conversion was about
 * twice this one's, with 43 full collections in 23 s against 20; with no growth limit at all RSS went from 167 to
 * 283 MB in 20 s, with 30 % it stayed within 7 %. 0 gives the growth back to V8 (and to the memory saver).
 */
export const MODE_FLAGS: Readonly<Record<MemoryMode, string>> = {
  saver: '--memory-saver-mode --heap-growing-percent=0',
  throughput: '--no-memory-saver-mode --heap-growing-percent=30',
}

export interface MemoryModeState {
  mode: MemoryMode
  /** Samples in a row, in throughput mode, whose event-loop utilisation was below the idle line. */
  idleSamples: number
}

export const MEMORY_MODE_POLICY = {
  /** How often the event loop's utilisation is read. */
  sampleMs: 1_000,
  /** A second at least this busy turns the memory saver off. */
  busyUtilisation: 0.5,
  /** Below this, a second counts as idle. */
  idleUtilisation: 0.1,
  /** Idle seconds in a row before the memory saver comes back. */
  idleSamples: 30,
} as const

/** The next state after one sample of the event loop's utilisation (0 to 1). Pure. */
export function nextMemoryMode(state: MemoryModeState, utilisation: number, policy = MEMORY_MODE_POLICY): MemoryModeState {
  if (state.mode === 'saver') return utilisation >= policy.busyUtilisation ? { mode: 'throughput', idleSamples: 0 } : state
  const idleSamples = utilisation < policy.idleUtilisation ? state.idleSamples + 1 : 0
  return idleSamples >= policy.idleSamples ? { mode: 'saver', idleSamples: 0 } : { mode: 'throughput', idleSamples }
}

/**
 * Whether this process runs with the memory saver as `dcgate start` gives it (core/cli/server-flags.ts): the last
 * mention on Node's command line or in NODE_OPTIONS wins, so an operator's `--no-memory-saver-mode` is left alone.
 */
export function startedWithMemorySaver(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  const mentions = [...execArgv, ...nodeOptions.split(/\s+/)].filter((flag) => /^--(no-)?memory[-_]saver[-_]mode$/.test(flag))
  return mentions.at(-1) === '--memory-saver-mode'
}

export interface MemoryModeGovernor {
  mode: () => MemoryMode
  stop: () => void
}

/** What the governor reads and does; tests give their own. */
export interface MemoryModeHooks {
  /** Event-loop utilisation (0 to 1) since the last call. */
  utilisation: () => number
  setFlags: (flags: string) => void
  collect: () => void
  onChange: (mode: MemoryMode) => void
  every: (ms: number, tick: () => void) => () => void
}

const processHooks = (): MemoryModeHooks => {
  let last: EventLoopUtilization = performance.eventLoopUtilization()
  return {
    utilisation() {
      const now = performance.eventLoopUtilization()
      const { utilization } = performance.eventLoopUtilization(now, last)
      last = now
      return utilization
    },
    setFlags: setFlagsFromString,
    collect: () => (globalThis as { gc?: () => void }).gc?.(),
    onChange: () => {},
    every(ms, tick) {
      const timer = setInterval(tick, ms)
      timer.unref()
      return () => clearInterval(timer)
    },
  }
}

/**
 * Samples the event loop every second and switches V8's mode when the load says so; back in saver mode it runs one
 * full collection (`gc`, from --expose-gc), since an idle server allocates too little for V8 to start one. Does
 * nothing unless the process started with the memory saver.
 */
export function governMemoryMode(given: Partial<MemoryModeHooks> = {}, active = startedWithMemorySaver()): MemoryModeGovernor {
  let state: MemoryModeState = { mode: 'saver', idleSamples: 0 }
  if (!active) return { mode: () => state.mode, stop: () => {} }
  const hooks = { ...processHooks(), ...given }
  const stop = hooks.every(MEMORY_MODE_POLICY.sampleMs, () => {
    const next = nextMemoryMode(state, hooks.utilisation())
    if (next.mode !== state.mode) {
      hooks.setFlags(MODE_FLAGS[next.mode])
      if (next.mode === 'saver') hooks.collect()
      hooks.onChange(next.mode)
    }
    state = next
  })
  return { mode: () => state.mode, stop }
}
