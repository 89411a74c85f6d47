#!/usr/bin/env node
// The `dcgate` command (and `npm start`): runs the TypeScript CLI in this same process, with no build step and no
// loader. Node.js 22.18+ and 24 strip the types themselves; this file stays plain JavaScript so an older Node can
// say what it needs instead of failing on the first `.ts` import. One process, so signals reach dcgate.
import module from 'node:module'

if (!process.features.typescript) {
  process.stderr.write(`dcgate needs Node.js 22 (22.18 or later) or 24; this Node.js (${process.version}) does not run TypeScript files.\n`)
  process.exit(1)
}

// V8's compiled code and the type-stripped sources are kept on disk (in the OS temp dir, or NODE_COMPILE_CACHE; none
// with NODE_DISABLE_COMPILE_CACHE=1): a restart then compiles and strips nothing it has seen, about a quarter of the
// CPU time a start needs. A cache that cannot be written is skipped silently.
// Enabled before the first `.ts` import: one file stripped without the cache loads Node's TypeScript stripper (a
// WebAssembly build of swc), which keeps some 17 MB for the life of the process.
module.enableCompileCache?.()

const { missingServerFlags, serverEnv } = await import('../core/cli/server-flags.ts')
const flags = missingServerFlags(process.argv.slice(2), process.execArgv, process.env.NODE_OPTIONS)
// Without process.execve (Windows) the server runs with Node's defaults and uses more memory.
if (flags.length > 0 && typeof process.execve === 'function') {
  // execve ends this process without Node's exit steps: write the cache now, or this file's stripping never lands.
  module.flushCompileCache?.()
  process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], serverEnv(process.env))
}

await import('../dcgate.ts')
