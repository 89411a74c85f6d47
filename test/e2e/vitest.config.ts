import { defineConfig } from 'vitest/config'

/**
 * The browser tests (npm run test:e2e): a real dcgate process, a page server and Debian's Chromium per file.
 * Slow to boot, so long timeouts; one file at a time (each starts its own server and browsers).
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/e2e/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
  },
})
