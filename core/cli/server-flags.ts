// The V8 flags and malloc settings the server's memory figures depend on (docs/architecture.md, "Memory"). V8 and
// glibc read them once, when the process starts, so bin/dcgate.mjs gives them by executing Node again in the same
// process (process.execve: same pid, so signals still reach dcgate), before anything else is loaded.

/**
 * - A young generation of at most 8 MB a semi-space: Node 24 grows it up to 64 MB under boot's allocations and then
 *   keeps the pages, about 110 MB of RSS that hold nothing.
 * - WebAssembly stays on V8's baseline compiler (Liftoff): optimising PGlite's largest functions (the embedded
 *   database) takes some 600 MB of memory at its peak and keeps 100-150 MB of it.
 * - `gc()`, which startServer calls once when boot is over: boot leaves some 90 MB of garbage (migrations, the
 *   parsed ASN and email lists) that an idle server would otherwise hold, as no allocation asks V8 to collect it.
 * - Full collections before the old generation doubles: under /collect it grew by 70 MB of garbage between two.
 *   Node 24's V8 has a memory saver mode for that (turned off while the server is busy: core/memory-mode.ts); Node 22's
 *   has not, and grows the heap by 30 % at most instead.
 */
export function serverFlags(nodeVersion = process.versions.node): string[] {
  const collection = Number(nodeVersion.split('.')[0]) >= 24 ? '--memory-saver-mode' : '--heap-growing-percent=30'
  return ['--max-semi-space-size=8', '--liftoff-only', '--expose-gc', collection]
}

/** The flags for the Node that runs this. */
export const SERVER_FLAGS: readonly string[] = serverFlags()

/**
 * glibc's malloc, told to give memory back: two arenas instead of one per thread (compiler and libuv threads each
 * kept their own), and blocks of 128 kB or more mapped on their own and returned when freed (by default glibc raises
 * that threshold after the first large free, so PGlite's start-up buffers stayed in its heap). About 50 MB on the
 * embedded database, 14 MB on PostgreSQL. Other C libraries (musl) ignore these.
 */
export const SERVER_MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
}

/** The environment to execute the server with: SERVER_MALLOC_ENV under what the operator set. */
export function serverEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...SERVER_MALLOC_ENV, ...env }
}

/**
 * The flags to add for this command line: none unless it runs the server (`start`), and none the operator already
 * set (on Node's command line or in NODE_OPTIONS, `--no-liftoff-only` included), so theirs win.
 */
export function missingServerFlags(args: readonly string[], execArgv: readonly string[], nodeOptions = ''): string[] {
  if (!args.includes('start')) return []
  const name = (flag: string) => flag.split('=')[0]!.replace(/^--no-/, '--')
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map(name))
  return SERVER_FLAGS.filter((flag) => !given.has(name(flag)))
}
