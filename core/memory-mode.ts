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

/**
 * One second of the process: how much of it the event loop was busy (0 to 1), and the CPU time it used as a share of
 * one core. Busy is read from the loop, which a server under load keeps busy even when other work on the machine
 * slows it; idle from the CPU time, which on such a machine stays low while the few timers of an idle server (and the
 * embedded database's queries, run on the loop) take longer in wall time.
 */
export interface LoadSample { loop: number, cpu: number }

export interface MemoryModeState {
  mode: MemoryMode
  /** Seconds since the loop was last busy, in throughput mode. */
  idleSamples: number
  /** The CPU of those seconds, in shares of a core added up. */
  idleCpu: number
}

export const MEMORY_MODE_POLICY = {
  sampleMs: 1_000,
  /** A second with the event loop at least half busy turns the memory saver off. */
  busyLoop: 0.5,
  /** Seconds that used less than a tenth of a core on average count as idle. */
  idleCpu: 0.1,
  /** Idle seconds before the memory saver comes back. */
  idleSamples: 30,
} as const

const BUSY: MemoryModeState = Object.freeze({ mode: 'throughput', idleSamples: 0, idleCpu: 0 })
const SAVER: MemoryModeState = Object.freeze({ mode: 'saver', idleSamples: 0, idleCpu: 0 })

/**
 * The next state after one second's sample. Pure. The saver comes back after `idleSamples` seconds without a busy
 * loop whose CPU averages under `idleCpu`; a window above it starts a new one. An average, not every second: an idle
 * server's periodic jobs and collections took a second above the line now and then (0.16 of a core among seconds of
 * 0.02 on a loaded machine), and with every second counted the saver did not come back for minutes.
 */
export function nextMemoryMode(state: MemoryModeState, sample: LoadSample, policy = MEMORY_MODE_POLICY): MemoryModeState {
  if (state.mode === 'saver') return sample.loop >= policy.busyLoop ? BUSY : state
  if (sample.loop >= policy.busyLoop) return BUSY
  const idleSamples = state.idleSamples + 1
  const idleCpu = state.idleCpu + sample.cpu
  if (idleSamples < policy.idleSamples) return { mode: 'throughput', idleSamples, idleCpu }
  return idleCpu / idleSamples < policy.idleCpu ? SAVER : BUSY
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
  /** The process since the last call. */
  sample: () => LoadSample
  setFlags: (flags: string) => void
  collect: () => void
  onChange: (mode: MemoryMode) => void
  every: (ms: number, tick: () => void) => () => void
}

const processHooks = (): MemoryModeHooks => {
  let last: { loop: EventLoopUtilization, cpu: NodeJS.CpuUsage, at: number } = { loop: performance.eventLoopUtilization(), cpu: process.cpuUsage(), at: performance.now() }
  return {
    sample() {
      const now = { loop: performance.eventLoopUtilization(), cpu: process.cpuUsage(), at: performance.now() }
      const cpuMs = (now.cpu.user - last.cpu.user + now.cpu.system - last.cpu.system) / 1000
      const sample = { loop: performance.eventLoopUtilization(now.loop, last.loop).utilization, cpu: cpuMs / Math.max(1, now.at - last.at) }
      last = now
      return sample
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
 * Samples the process every second and switches V8's mode when the load says so; back in saver mode it runs one full
 * collection (`gc`, from --expose-gc), since an idle server allocates too little for V8 to start one. Does nothing
 * unless the process started with the memory saver.
 */
export function governMemoryMode(given: Partial<MemoryModeHooks> = {}, active = startedWithMemorySaver()): MemoryModeGovernor {
  let state: MemoryModeState = SAVER
  if (!active) return { mode: () => state.mode, stop: () => {} }
  const hooks = { ...processHooks(), ...given }
  const stop = hooks.every(MEMORY_MODE_POLICY.sampleMs, () => {
    const next = nextMemoryMode(state, hooks.sample())
    if (next.mode !== state.mode) {
      hooks.setFlags(MODE_FLAGS[next.mode])
      if (next.mode === 'saver') hooks.collect()
      hooks.onChange(next.mode)
    }
    state = next
  })
  return { mode: () => state.mode, stop }
}
