import { describe, expect, it } from 'vitest'
import { MEMORY_MODE_POLICY, MODE_FLAGS, governMemoryMode, nextMemoryMode, startedWithMemorySaver, type MemoryModeState } from '../../core/memory-mode.ts'

// Issue 30: V8's memory saver keeps an idle server small (issue 26) but costs a busy one full collections every
// half second; the mode follows the load (docs/architecture.md, "Memory").
describe('the memory saver mode follows the load', () => {
  const saver: MemoryModeState = { mode: 'saver', idleSamples: 0, idleCpu: 0 }
  const idle = (state: MemoryModeState, seconds: number, cpu: number) => {
    for (let i = 0; i < seconds; i++) state = nextMemoryMode(state, { loop: 0.3, cpu })
    return state
  }

  it('goes off after one busy second and comes back after 30 idle ones', () => {
    expect(nextMemoryMode(saver, { loop: 0.3, cpu: 0.3 })).toEqual(saver)
    const busy = nextMemoryMode(saver, { loop: 0.9, cpu: 0.4 })
    expect(busy.mode).toBe('throughput')
    // Idle is read from the CPU time: a slow loop on a machine busy with other work still counts as idle.
    const almost = idle(busy, MEMORY_MODE_POLICY.idleSamples - 1, 0.02)
    expect(almost.mode).toBe('throughput')
    expect(almost.idleSamples).toBe(MEMORY_MODE_POLICY.idleSamples - 1)
    // A busy loop starts the count again.
    expect(nextMemoryMode(almost, { loop: 0.6, cpu: 0.2 })).toEqual({ mode: 'throughput', idleSamples: 0, idleCpu: 0 })
    expect(nextMemoryMode(almost, { loop: 0.02, cpu: 0.02 })).toEqual(saver)
  })

  it('comes back though a second of the window is above the line, not while the window is', () => {
    const busy = nextMemoryMode(saver, { loop: 0.9, cpu: 0.4 })
    // A periodic job or a collection: one second at 0.16 of a core among idle ones.
    const spiked = idle(nextMemoryMode(idle(busy, 10, 0.02), { loop: 0.3, cpu: 0.16 }), MEMORY_MODE_POLICY.idleSamples - 11, 0.02)
    expect(spiked.mode).toBe('saver')
    // A server kept at 0.15 of a core stays without the saver, window after window.
    expect(idle(busy, MEMORY_MODE_POLICY.idleSamples * 3, 0.15).mode).toBe('throughput')
  })

  it('sets V8\'s flag on each change and collects once when the saver comes back', () => {
    const loads = [0.05, 0.8, 0.9, ...Array.from({ length: MEMORY_MODE_POLICY.idleSamples }, () => 0.01)].map((share) => ({ loop: share, cpu: share }))
    const flags: string[] = []
    const changes: string[] = []
    let collections = 0
    let tick = () => {}
    const governor = governMemoryMode({
      sample: () => loads.shift()!,
      setFlags: (flag) => flags.push(flag),
      collect: () => collections++,
      onChange: (mode) => changes.push(mode),
      every: (_ms, fn) => {
        tick = fn
        return () => {}
      },
    }, true)
    tick()
    expect(governor.mode()).toBe('saver')
    tick()
    expect(governor.mode()).toBe('throughput')
    expect(collections).toBe(0)
    while (loads.length > 0) tick()
    expect(governor.mode()).toBe('saver')
    expect(flags).toEqual([MODE_FLAGS.throughput, MODE_FLAGS.saver])
    expect(MODE_FLAGS.throughput).toContain('--no-memory-saver-mode')
    expect(changes).toEqual(['throughput', 'saver'])
    expect(collections).toBe(1)
  })

  it('is left alone when the operator turned the memory saver off', () => {
    expect(startedWithMemorySaver(['--max-semi-space-size=8', '--memory-saver-mode'], '')).toBe(true)
    expect(startedWithMemorySaver(['--memory-saver-mode'], '--no-memory-saver-mode')).toBe(false)
    expect(startedWithMemorySaver(['--heap-growing-percent=30'], '')).toBe(false)
    let sampled = false
    governMemoryMode({ sample: () => (sampled = true, { loop: 1, cpu: 1 }), every: (_ms, fn) => (fn(), () => {}) }, false)
    expect(sampled).toBe(false)
  })
})
