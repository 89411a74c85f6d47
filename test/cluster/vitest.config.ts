import { defineConfig } from 'vitest/config'

/**
 * The cluster test (npm run test:cluster, CI after the PostgreSQL suite): three dcgate processes on one PostgreSQL and
 * one Redis behind Caddy. Its files end in `.cluster.ts`, so the ordinary suite (test/**\/*.test.ts) never picks
 * them up. One file at a time, long timeouts: three boots and a kill take a while on a loaded 2-core machine.
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/cluster/**/*.cluster.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
})
