/** Jest runs the compiled tests (tsc → dist/), in native ESM mode (NestJS 12 is ESM-only). */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/dist/test'],
  testMatch: ['**/*.test.js'],
  transform: {},
  testTimeout: 30000,
  // `npm test` (scripts/run-tests.mjs) runs most suites in parallel workers and the few that measure
  // wall-clock bounds (scripts/test-groups.mjs) one at a time afterwards; jest run directly uses two.
  maxWorkers: 2,
  // The longest suites first, whatever timings jest has cached (scripts/test-sequencer.mjs).
  testSequencer: '<rootDir>/scripts/test-sequencer.mjs',
  // Suites start gateways whose heaps outlive them in a worker (vm contexts of ESM suites are freed late):
  // a worker above this after a suite is replaced, so later suites do not pay for a multi-GB heap's GC.
  workerIdleMemoryLimit: '1536MB',
};
