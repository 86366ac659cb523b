/**
 * The content-safety engine (issue 36; DESIGN.md §13): local detectors, compiling policies, scanning and
 * transforming text (mask, tokenize, log, block), authenticated placeholders with request- and session-scoped
 * vaults, and their exact recovery in buffered and streamed answers. Library code: the pipeline wires it.
 */
export * from './compiled-policy.js';
export * from './compiled-policy-cache.js';
export * from './finding.js';
export * from './finding-counts.js';
export * from './output-stream.js';
export * from './placeholder.js';
export * from './placeholder-keys.js';
export * from './placeholder-recovery-stream.js';
export * from './recovery.js';
export * from './request-token-vault.js';
export * from './scanner.js';
export * from './session-token-vault.js';
export * from './text-policy.js';
export * from './token-vault.js';
export * from './transformation.js';
export * from './transformation-manifest.js';
export { PROMPT_INJECTION_HEURISTICS, type PromptInjectionHeuristic } from './detectors/prompt-injection-detector.js';
export { LIBPHONENUMBER_VERSION } from './detectors/phone-detector.js';
export { WINDOW_MARGIN } from './detectors/scan-text.js';
