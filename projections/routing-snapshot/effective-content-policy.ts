import type {
  AppliedContentPolicy, ContentAction, ContentPolicyDefinition, CustomPatternRule, DenyTermsRule, DirectionRules, PolicyModeration, PolicyWebhook,
} from '../../events/index.js';
import { stricterAction } from '../../events/index.js';

/** The content policy a request is admitted under: what RequestAdmitted records, and the one definition the engine enforces. */
export interface EffectiveContentPolicy {
  applied: AppliedContentPolicy;
  /** The combination of every policy in `applied` (the policy itself when only one applies). */
  definition: ContentPolicyDefinition;
  /** Every policy's webhook guardrail, with its policy: remote checks are not combined, each one is asked. */
  webhooks?: PolicyWebhook[];
  /** Every policy's moderation check, with its policy: like webhooks, each one is asked. */
  moderations?: PolicyModeration[];
}

/** One policy in force for a request: where it is attached, its version, and that version's definition. */
export interface AttachedPolicy {
  policyId: string;
  version: number;
  attachedTo: 'tenant' | 'key' | 'alias';
  definition: ContentPolicyDefinition;
}


/**
 * The policies attached to a tenant, a key and an alias, as one (docs/content-safety.md, "Combination"):
 * - per finding type and direction the strictest action wins (block > mask > tokenize > log > allow; left out is allow);
 * - custom patterns are the union (the same name and pattern twice is one rule, with the stricter action);
 * - deny terms are the union of the terms, under the strictest of their actions (one action covers every term);
 * - tokenScope is `session` only when every policy that tokenizes something asks for it, else `request`: a
 *   policy that keeps its mappings in request memory must not see them outlive the request because another asked;
 * - unresolvedTokenPolicy `reject-buffered` wins over `leave-masked`; placeholderInstruction is on when any asks.
 * The same policy attached at two levels counts once. Pure; the snapshot memoises it per (tenant, key, alias).
 */
export function combineContentPolicies(attached: readonly AttachedPolicy[]): EffectiveContentPolicy | null {
  if (attached.length === 0) return null;
  const applied: AppliedContentPolicy = { sources: attached.map(({ policyId, version, attachedTo }) => ({ policyId, version, attachedTo })) };
  const distinct = [...new Map(attached.map((policy) => [`${policy.policyId}@${policy.version}`, policy.definition])).values()];
  const webhooks = [...new Map(attached.filter((policy) => policy.definition.webhook)
    .map(({ policyId, version, definition }) => [`${policyId}@${version}`, { policyId, version, webhook: definition.webhook! }])).values()];
  const moderations = [...new Map(attached.filter((policy) => policy.definition.moderation)
    .map(({ policyId, version, definition }) => [`${policyId}@${version}`, { policyId, version, moderation: definition.moderation! }])).values()];
  const remote = { ...(webhooks.length > 0 ? { webhooks } : {}), ...(moderations.length > 0 ? { moderations } : {}) };
  if (distinct.length === 1) return { applied, definition: distinct[0], ...remote };
  const tokenizing = distinct.filter(tokenizes);
  return {
    applied,
    ...remote,
    definition: {
      input: combineDirection(distinct.map((d) => d.input)),
      output: combineDirection(distinct.map((d) => d.output)),
      tokenScope: tokenizing.length > 0 && tokenizing.every((d) => d.tokenScope === 'session') ? 'session' : 'request',
      unresolvedTokenPolicy: distinct.some((d) => d.unresolvedTokenPolicy === 'reject-buffered') ? 'reject-buffered' : 'leave-masked',
      placeholderInstruction: distinct.some((d) => d.placeholderInstruction),
    },
  };
}

function combineDirection(rules: readonly DirectionRules[]): DirectionRules {
  const combined: Record<string, unknown> = {};
  const custom = new Map<string, CustomPatternRule>();
  let deny: DenyTermsRule | null = null;
  for (const rule of rules) {
    for (const [type, value] of Object.entries(rule)) {
      if (type === 'custom' || type === 'deny_terms' || value === undefined) continue;
      const action = value as ContentAction;
      const before = combined[type] as ContentAction | undefined;
      combined[type] = before === undefined ? action : stricterAction(before, action);
    }
    for (const pattern of rule.custom ?? []) {
      const key = JSON.stringify([pattern.name, pattern.pattern]);
      const before = custom.get(key);
      custom.set(key, before ? { name: before.name, pattern: before.pattern, action: stricterAction(before.action, pattern.action) } : pattern);
    }
    if (rule.deny_terms) {
      deny = deny === null
        ? { terms: [...rule.deny_terms.terms], action: rule.deny_terms.action }
        : { terms: [...new Set([...deny.terms, ...rule.deny_terms.terms])], action: stricterAction(deny.action, rule.deny_terms.action) };
    }
  }
  return {
    ...(combined as DirectionRules),
    ...(custom.size ? { custom: [...custom.values()] } : {}),
    ...(deny ? { deny_terms: deny } : {}),
  };
}

function tokenizes(definition: ContentPolicyDefinition): boolean {
  return [definition.input, definition.output].some((rules) =>
    Object.entries(rules).some(([type, value]) => (type === 'custom'
      ? (value as CustomPatternRule[]).some((pattern) => pattern.action === 'tokenize')
      : type === 'deny_terms' ? (value as DenyTermsRule).action === 'tokenize' : value === 'tokenize')));
}
