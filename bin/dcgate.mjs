#!/usr/bin/env node
// The `dcgate` command: runs the TypeScript CLI in this same process (no build step, one process for
// signals). Importing `tsx` registers its ESM and CommonJS hooks, exactly as `node --import tsx` does, so a
// config file written in TypeScript or CommonJS loads from any folder.
import 'tsx'

await import('../dcgate.ts')
