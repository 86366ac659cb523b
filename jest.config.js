export default { testEnvironment: 'node', roots: ['<rootDir>/dist/test'], testMatch: ['**/*.test.js'], transform: {} };
