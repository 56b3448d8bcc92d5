import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/skipped-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: PGlite instances are CPU-heavy, and the real server is shared.
    maxWorkers: 2,
  },
});
