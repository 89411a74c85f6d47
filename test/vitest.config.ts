import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'test/bench/**', 'node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    // Tests boot real embedded Postgres instances (about a second each from the template).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
})
