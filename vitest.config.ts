import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'tooling/**/*.test.ts', 'scripts/test/**/*.test.ts', 'deploy/**/*.test.ts'],
    globalSetup: ['scripts/test/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // Two test files at once on two cores, each starting servers, browsers and workers: a browser
    // test that takes 14 s alone took over 60 s in CI (stop 31). A test's own bound, where it
    // waits longer, is on the test.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
