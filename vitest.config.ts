import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One database and one server per worker, shared by that worker's files (each test makes its
    // own organization, so tests never see each other's data).
    pool: 'forks',
    isolate: false,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    globalSetup: ['test/support/global-setup.ts'],
  },
});
