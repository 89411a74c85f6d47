import { describe, expect, it } from 'vitest'
import { SERVER_FLAGS, missingServerFlags, serverEnv, serverFlags } from '../../core/cli/server-flags.ts'
import { BIN, childEnv, runCommand, tempDir } from '../helpers/server-process.ts'

// Issue 26: the server's memory needs two V8 settings that only work when given as Node starts; bin/dcgate.mjs
// executes Node again with them, in the same process, for `dcgate start` (docs/architecture.md, "Memory").
describe('the server\'s Node flags', () => {
  it('ask Node 24 for its memory saver mode, which Node 22 does not have', () => {
    expect(serverFlags('24.3.0')).toEqual(['--max-semi-space-size=8', '--liftoff-only', '--expose-gc', '--memory-saver-mode'])
    expect(serverFlags('22.18.0')).toEqual(['--max-semi-space-size=8', '--liftoff-only', '--expose-gc', '--heap-growing-percent=30'])
  })

  it('are added for start only, and never over a value the operator gave', () => {
    const [semiSpace, liftoff, exposeGc, collection] = SERVER_FLAGS
    expect(missingServerFlags(['start'], [])).toEqual(SERVER_FLAGS)
    expect(missingServerFlags(['start', '--config', 'x.ts'], ['--max-semi-space-size=32'])).toEqual([liftoff, exposeGc, collection])
    expect(missingServerFlags(['start'], [], `--max-old-space-size=300 --max-semi-space-size=16 --expose-gc ${collection}`)).toEqual([liftoff])
    expect(missingServerFlags(['start'], ['--no-liftoff-only'])).toEqual([semiSpace, exposeGc, collection])
    expect(missingServerFlags(['keys', 'list', '--site', 'demo'], [])).toEqual([])
  })

  it('come with glibc malloc settings that give memory back, under the operator\'s own', () => {
    expect(serverEnv({ PATH: '/usr/bin', MALLOC_ARENA_MAX: '4' })).toEqual({ PATH: '/usr/bin', MALLOC_ARENA_MAX: '4', MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' })
  })

  it('dcgate start runs in the same process with them; an admin command runs as it was started', async () => {
    // Each Node that starts prints its pid, flags and malloc settings: the first one, then the one executed in its place.
    const env = childEnv({ DCGATE_DATA_DIR: tempDir(), NODE_OPTIONS: '--import=data:text/javascript,console.error(JSON.stringify([process.pid,process.execArgv,process.env.MALLOC_ARENA_MAX??null]))' })
    delete env.MALLOC_ARENA_MAX
    const start = await runCommand(process.execPath, [BIN, 'start', '--help'], env)
    const [first, second] = start.stderr.trim().split('\n').map((line) => JSON.parse(line) as [number, string[], string | null])
    expect(start.code).toBe(0)
    expect(first!.slice(1)).toEqual([[], null])
    expect(second).toEqual([first![0], SERVER_FLAGS, '2'])
    const admin = await runCommand(process.execPath, [BIN, 'keys', '--help'], env)
    expect(admin.stderr.trim().split('\n')).toHaveLength(1)
  })
})
