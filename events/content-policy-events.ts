import type { DomainEvent } from './event.js';

/**
 * Content policies (issue 36; DESIGN.md §13): what a gateway does with the sensitive content it finds in a
 * request (input) and in an answer (output). A policy is an aggregate on stream `content-policy-{id}`,
 * versioned (1, 2, … per definition change), attached to a tenant, an API key or an alias by id.
 *
 * The definition is the YAML contract of issue 36, kept as declared (snake_case finding names are part of it).
 */

/** What happens to one kind of finding, per direction. Strictness order when policies combine: block > mask > tokenize > log > allow. */
export type ContentAction = 'allow' | 'log' | 'mask' | 'tokenize' | 'block';

/** The built-in detectors, by the name the YAML uses. */
export type BuiltInFindingType =
  | 'email' | 'phone' | 'card' | 'iban' | 'national_id' | 'ip_address' | 'secret' | 'prompt_injection';

/** An operator's own pattern: matched by a linear-time-safe regular expression, validated when the policy is applied. */
export interface CustomPatternRule {
  name: string;
  pattern: string;
  action: ContentAction;
}

/** Terms that must not pass (case-insensitive, whole words); one action for all of them. */
export interface DenyTermsRule {
  terms: string[];
  action: ContentAction;
}

/** The rules of one direction. A finding type left out is `allow` (not scanned). */
export type DirectionRules = Partial<Record<BuiltInFindingType, ContentAction>> & {
  custom?: CustomPatternRule[];
  deny_terms?: DenyTermsRule;
};

/** The policy as declared (YAML `contentPolicies[]`, the admin API body, minus its id). */
export interface ContentPolicyDefinition {
  input: DirectionRules;
  output: DirectionRules;
  /** Where a tokenized value's mapping lives: the request's memory (default), or the session (`x-session-id`, Redis, encrypted). */
  tokenScope: 'request' | 'session';
  /** A placeholder in an answer that cannot be recovered exactly: left as it is (default), or the buffered request fails. */
  unresolvedTokenPolicy: 'leave-masked' | 'reject-buffered';
  /** Adds a short server-owned system instruction to copy placeholders verbatim when the input is tokenized. */
  placeholderInstruction: boolean;
}

export type ContentPolicyDefined = DomainEvent<'ContentPolicyDefined', { policyId: string; version: number; definition: ContentPolicyDefinition }>;
export type ContentPolicyUpdated = DomainEvent<'ContentPolicyUpdated', { policyId: string; version: number; definition: ContentPolicyDefinition }>;
export type ContentPolicyRetired = DomainEvent<'ContentPolicyRetired', { policyId: string; version: number }>;

export type ContentPolicyEvent = ContentPolicyDefined | ContentPolicyUpdated | ContentPolicyRetired;
export const CONTENT_POLICY_EVENT_TYPES = ['ContentPolicyDefined', 'ContentPolicyUpdated', 'ContentPolicyRetired'] as const;

export const contentPolicyStream = (policyId: string) => `content-policy-${policyId}`;

/** The policy a request was admitted under: recorded on RequestAdmitted (ids and versions, never content). */
export interface AppliedContentPolicy {
  /** Every policy in force, with where it was attached (tenant, key, alias) and its version. */
  sources: Array<{ policyId: string; version: number; attachedTo: 'tenant' | 'key' | 'alias' }>;
}
