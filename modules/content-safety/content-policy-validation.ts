import type { BuiltInFindingType, ContentAction, ContentPolicyDefinition, DirectionRules } from '../../events/index.js';
import { customPatternProblem } from './custom-pattern-safety.js';
import { moderationCheckProblems, normalizeModerationCheck } from './moderation-check-validation.js';
import { normalizeWebhookGuardrail, webhookGuardrailProblems } from './webhook-guardrail-validation.js';

export const CONTENT_ACTIONS: readonly ContentAction[] = ['allow', 'log', 'mask', 'tokenize', 'block'];

/** An answer's findings cannot be tokenized: the client would receive placeholders nothing can recover. */
export const OUTPUT_ACTIONS: readonly ContentAction[] = ['allow', 'log', 'mask', 'block'];

export const BUILT_IN_FINDING_TYPES: readonly BuiltInFindingType[] = [
  'email', 'phone', 'card', 'iban', 'national_id', 'ip_address', 'secret', 'prompt_injection',
];

/** Bounds of one policy: each is far above what a real policy needs and keeps a request's scan bounded. */
export const CONTENT_POLICY_BOUNDS = Object.freeze({ customPatterns: 50, denyTerms: 10_000, denyTermLength: 200 });

const CUSTOM_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const POLICY_FIELDS = ['input', 'output', 'tokenScope', 'unresolvedTokenPolicy', 'placeholderInstruction', 'webhook', 'moderation'];
const TOKEN_SCOPES = ['request', 'session'];
const UNRESOLVED_POLICIES = ['leave-masked', 'reject-buffered'];

/**
 * Everything wrong with a content policy as declared (YAML `contentPolicies[]` minus `id`, or an admin API body),
 * each problem prefixed with its path (`contentPolicies[0].input.custom[1].pattern: …`); empty when it is valid.
 * Custom patterns are checked for catastrophic backtracking here, when the policy is applied, never per request.
 */
export function contentPolicyProblems(definition: unknown, path: string): string[] {
  const problems: string[] = [];
  if (!isRecord(definition)) return [`${path}: must be an object`];
  for (const key of Object.keys(definition)) {
    if (key !== 'id' && !POLICY_FIELDS.includes(key)) problems.push(`${path}.${key}: unknown field (expected one of ${POLICY_FIELDS.join(', ')})`);
  }
  for (const direction of ['input', 'output'] as const) {
    const rules = definition[direction];
    if (rules === undefined) continue;
    problems.push(...directionProblems(rules, `${path}.${direction}`, direction === 'input' ? CONTENT_ACTIONS : OUTPUT_ACTIONS));
  }
  if (definition.tokenScope !== undefined && !TOKEN_SCOPES.includes(definition.tokenScope as string)) {
    problems.push(`${path}.tokenScope: must be one of ${TOKEN_SCOPES.join(', ')}`);
  }
  if (definition.unresolvedTokenPolicy !== undefined && !UNRESOLVED_POLICIES.includes(definition.unresolvedTokenPolicy as string)) {
    problems.push(`${path}.unresolvedTokenPolicy: must be one of ${UNRESOLVED_POLICIES.join(', ')}`);
  }
  if (definition.placeholderInstruction !== undefined && typeof definition.placeholderInstruction !== 'boolean') {
    problems.push(`${path}.placeholderInstruction: must be true or false`);
  }
  if (definition.webhook !== undefined) problems.push(...webhookGuardrailProblems(definition.webhook, `${path}.webhook`));
  if (definition.moderation !== undefined) problems.push(...moderationCheckProblems(definition.moderation, `${path}.moderation`));
  return problems;
}

function directionProblems(rules: unknown, path: string, allowed: readonly ContentAction[]): string[] {
  if (!isRecord(rules)) return [`${path}: must be an object of finding type → action`];
  const problems: string[] = [];
  const action = (value: unknown, at: string) => {
    if (typeof value !== 'string' || !allowed.includes(value as ContentAction)) {
      problems.push(`${at}: must be one of ${allowed.join(', ')}${value === 'tokenize' ? ' (an answer cannot be tokenized: the client could not recover it)' : ''}`);
    }
  };
  for (const [key, value] of Object.entries(rules)) {
    if (key === 'custom') problems.push(...customProblems(value, `${path}.custom`, action));
    else if (key === 'deny_terms') problems.push(...denyTermProblems(value, `${path}.deny_terms`, action));
    else if ((BUILT_IN_FINDING_TYPES as readonly string[]).includes(key)) action(value, `${path}.${key}`);
    else problems.push(`${path}.${key}: unknown finding type (expected one of ${[...BUILT_IN_FINDING_TYPES, 'custom', 'deny_terms'].join(', ')})`);
  }
  return problems;
}

function customProblems(value: unknown, path: string, action: (value: unknown, at: string) => void): string[] {
  if (!Array.isArray(value)) return [`${path}: must be a list of { name, pattern, action }`];
  if (value.length > CONTENT_POLICY_BOUNDS.customPatterns) return [`${path}: at most ${CONTENT_POLICY_BOUNDS.customPatterns} custom patterns`];
  const problems: string[] = [];
  const names = new Set<string>();
  value.forEach((rule, index) => {
    const at = `${path}[${index}]`;
    if (!isRecord(rule)) {
      problems.push(`${at}: must be an object { name, pattern, action }`);
      return;
    }
    for (const key of Object.keys(rule)) if (!['name', 'pattern', 'action'].includes(key)) problems.push(`${at}.${key}: unknown field`);
    if (typeof rule.name !== 'string' || !CUSTOM_NAME.test(rule.name)) problems.push(`${at}.name: must be 1-40 characters of a-z, 0-9, '-' or '_'`);
    else if (names.has(rule.name)) problems.push(`${at}.name: '${rule.name}' is declared twice`);
    else names.add(rule.name);
    if (typeof rule.pattern !== 'string') problems.push(`${at}.pattern: must be a string`);
    else {
      const problem = customPatternProblem(rule.pattern);
      if (problem) problems.push(`${at}.pattern: ${problem}`);
    }
    action(rule.action, `${at}.action`);
  });
  return problems;
}

function denyTermProblems(value: unknown, path: string, action: (value: unknown, at: string) => void): string[] {
  if (!isRecord(value)) return [`${path}: must be { terms: [...], action }`];
  const problems: string[] = [];
  for (const key of Object.keys(value)) if (!['terms', 'action'].includes(key)) problems.push(`${path}.${key}: unknown field`);
  const terms = value.terms;
  if (!Array.isArray(terms) || terms.length === 0) problems.push(`${path}.terms: must be a non-empty list of strings`);
  else if (terms.length > CONTENT_POLICY_BOUNDS.denyTerms) problems.push(`${path}.terms: at most ${CONTENT_POLICY_BOUNDS.denyTerms} terms`);
  else {
    terms.forEach((term, index) => {
      if (typeof term !== 'string' || term.trim().length === 0 || term.length > CONTENT_POLICY_BOUNDS.denyTermLength) {
        problems.push(`${path}.terms[${index}]: must be a non-blank string of at most ${CONTENT_POLICY_BOUNDS.denyTermLength} characters`);
      }
    });
  }
  action(value.action, `${path}.action`);
  return problems;
}

/**
 * A valid definition with its defaults filled (request scope, leave-masked, no instruction) and its rules in a
 * stable order, so that two declarations of the same policy compare equal (a new version only when it changes).
 * Call it only on a definition without problems.
 */
export function normalizeContentPolicy(definition: Record<string, unknown>): ContentPolicyDefinition {
  return {
    input: normalizeRules(definition.input as DirectionRules | undefined),
    output: normalizeRules(definition.output as DirectionRules | undefined),
    tokenScope: (definition.tokenScope as ContentPolicyDefinition['tokenScope'] | undefined) ?? 'request',
    unresolvedTokenPolicy: (definition.unresolvedTokenPolicy as ContentPolicyDefinition['unresolvedTokenPolicy'] | undefined) ?? 'leave-masked',
    placeholderInstruction: (definition.placeholderInstruction as boolean | undefined) ?? false,
    ...(definition.webhook !== undefined ? { webhook: normalizeWebhookGuardrail(definition.webhook as Record<string, unknown>) } : {}),
    ...(definition.moderation !== undefined ? { moderation: normalizeModerationCheck(definition.moderation as Record<string, unknown>) } : {}),
  };
}

function normalizeRules(rules: DirectionRules | undefined): DirectionRules {
  const out: DirectionRules = {};
  if (!rules) return out;
  for (const type of BUILT_IN_FINDING_TYPES) if (rules[type] !== undefined) out[type] = rules[type];
  if (rules.custom && rules.custom.length > 0) out.custom = rules.custom.map(({ name, pattern, action }) => ({ name, pattern, action }));
  if (rules.deny_terms) out.deny_terms = { terms: [...rules.deny_terms.terms], action: rules.deny_terms.action };
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
