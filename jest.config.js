/** Jest runs the compiled tests (tsc → dist/), in native ESM mode (NestJS 12 is ESM-only). */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/dist/test'],
  testMatch: ['**/*.test.js'],
  transform: {},
  testTimeout: 30000,
  maxWorkers: 2,
};
