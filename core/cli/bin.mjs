#!/usr/bin/env node
// The `dcgate` command: runs the TypeScript CLI in this same process (no build step, one process for signals).
import { register } from 'tsx/esm/api'

register()
await import('./main.ts')
