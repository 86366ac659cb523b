/**
 * The content-safety engine (issue 36; DESIGN.md §13): local detectors, compiling policies, scanning and
 * transforming text (mask, tokenize, log, block), authenticated placeholders with request- and session-scoped
 * vaults, and their exact recovery in buffered and streamed answers. Library code: the pipeline wires it.
 */
export * from './compiled-policy.js';
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
export { PROMPT_INJECTION_HEURISTICS, type PromptInjectionHeuristic } from './detectors/prompt-injection-detector.js';
export { LIBPHONENUMBER_VERSION } from './detectors/phone-detector.js';
export { WINDOW_MARGIN } from './detectors/scan-text.js';
export * from './content-policy-validation.js';
export { customPatternProblem, CUSTOM_PATTERN_FLAGS, MAX_CUSTOM_PATTERN_LENGTH } from './custom-pattern-safety.js';
export * from './content-guard.js';
export * from './content-policy-violation.js';
export { rewriteRequestContent, rewriteJsonText, type ContentPlace } from './request-content.js';
export * from './content-safety-settings.js';
export { ContentSafetyModule, CONTENT_GUARD_RESOURCES } from './content-safety.module.js';
export * from './remote-checks.js';
export { askWebhookGuardrail, RemoteCheckFailure, type RemoteCheckFailureReason, type RemoteVerdict } from './webhook-guardrail.js';
export { WEBHOOK_GUARDRAIL_TIMEOUT } from './webhook-guardrail-validation.js';
export { MODERATION_CHECK_TIMEOUT, MODERATION_PROVIDER_TYPES } from './moderation-check-validation.js';
export { runModerationChecks, type ModerationCaller, type ModerationVerdict } from './moderation-check.js';
