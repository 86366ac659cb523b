/** Jest runs the compiled tests (tsc → dist/), in native ESM mode (NestJS 12 is ESM-only). */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/dist/test'],
  testMatch: ['**/*.test.js'],
  transform: {},
  testTimeout: 30000,
  // One suite at a time: several suites start servers and measure bounds (abort within 100 ms) that
  // must not depend on a neighbour suite loading the same two cores.
  maxWorkers: 1,
  // Suites start gateways whose heaps outlive them in a worker (vm contexts of ESM suites are freed late):
  // a worker above this after a suite is replaced, so later suites do not pay for a multi-GB heap's GC.
  workerIdleMemoryLimit: '1536MB',
};
