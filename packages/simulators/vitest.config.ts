import { defineConfig } from 'vitest/config';

/**
 * Standalone config for this package (no database global setup needed):
 *   npx vitest run --config packages/simulators/vitest.config.ts
 * The repo-wide `npx vitest run packages/simulators` also runs these tests.
 */
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
  },
});
