import { defineConfig } from 'vitest/config'
import base from '../vitest.config.ts'

/**
 * The suites that hold dates, event-age windows, graces, retention or expiry, run by test/clock-ahead/run.sh with the
 * clock a year ahead. Left out: suites that compare file times with the clock (the mail outbox, the capture dead
 * letters), because the kernel stamps files with the real time while only Node's clock moves; and the adapter
 * contract suites, which run on fixed clocks of their own (test/contract/fixtures.ts FIXED_NOW).
 */
export default defineConfig({
  test: {
    // The main config's settings (root, setup, timeouts, pool), with this list instead of every test.
    ...base.test,
    include: [
      'test/intake/automation.test.ts',
      'test/delivery/burst.test.ts',
      'test/delivery/shopify-to-all-platforms.test.ts',
      'test/delivery/adjust-shopify.test.ts',
      'test/delivery/refunds.test.ts',
      'test/delivery/refunds-sources.test.ts',
      'test/delivery/trust.test.ts',
      'test/release/late-lead.test.ts',
      'test/release/release.test.ts',
      'test/sources/intake-sources.test.ts',
      'test/dashboard/deliveries.test.ts',
      'test/capture/retention.test.ts',
      'test/export/endpoints.test.ts',
    ],
  },
})
