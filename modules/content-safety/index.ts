/** The content-safety context's public surface (issue 36): policy validation; detectors and transformation follow. */
export * from './content-policy-validation.js';
export { customPatternProblem, CUSTOM_PATTERN_FLAGS, MAX_CUSTOM_PATTERN_LENGTH } from './custom-pattern-safety.js';
