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
  /** A remote check of the operator's own: the text is POSTed to it after the local checks (docs/content-safety-remote.md). */
  webhook?: WebhookGuardrail;
  /** A moderation check through one of the gateway's own aliases (OpenAI `/v1/moderations`), billed as a request of its own. */
  moderation?: ModerationCheck;
}

/** The directions a remote check looks at: the request before dispatch, the buffered answer before it is sent. */
export type RemoteCheckDirection = 'input' | 'output';

/**
 * A webhook guardrail as declared: the gateway POSTs the text (as the local checks left it: masked, tokenized) to
 * `url` under the outbound address policy and the operator answers `{ action: allow | block, reason? }`. When it
 * cannot answer in time, `failOpen` lets the request through (counted) or refuses it (503 guardrail_unavailable).
 */
export interface WebhookGuardrail {
  url: string;
  /** A secret reference (`env:NAME`, `file:PATH`): the HMAC-SHA256 key of the `x-switchyard-signature` header. */
  secret?: string;
  timeoutMs: number;
  failOpen: boolean;
  directions: RemoteCheckDirection[];
  /** Loopback, private and link-local addresses allowed (never a metadata address). */
  allowPrivateNetwork?: boolean;
}

/**
 * A moderation check as declared: the text (as the local checks left it) is sent to `alias`, whose routes reach
 * deployments with the `moderation` capability (OpenAI's `/v1/moderations` wire), through the gateway's own adapters
 * and pools. Flagged in one of `categories` (any category when absent) blocks; no verdict follows `failOpen`.
 */
export interface ModerationCheck {
  alias: string;
  directions: RemoteCheckDirection[];
  failOpen: boolean;
  categories?: string[];
  timeoutMs: number;
}

/** One policy's moderation check, as a request runs it. */
export interface PolicyModeration {
  policyId: string;
  version: number;
  moderation: ModerationCheck;
}

/** One policy's remote check, as a request runs it: the owner is named in errors, metrics and the webhook's payload. */
export interface PolicyWebhook {
  policyId: string;
  version: number;
  webhook: WebhookGuardrail;
}

export type ContentPolicyDefined = DomainEvent<'ContentPolicyDefined', { policyId: string; version: number; definition: ContentPolicyDefinition }>;
export type ContentPolicyUpdated = DomainEvent<'ContentPolicyUpdated', { policyId: string; version: number; definition: ContentPolicyDefinition }>;
export type ContentPolicyRetired = DomainEvent<'ContentPolicyRetired', { policyId: string; version: number }>;

export type ContentPolicyEvent = ContentPolicyDefined | ContentPolicyUpdated | ContentPolicyRetired;
export const CONTENT_POLICY_EVENT_TYPES = ['ContentPolicyDefined', 'ContentPolicyUpdated', 'ContentPolicyRetired'] as const;

export const contentPolicyStream = (policyId: string) => `content-policy-${policyId}`;

/** Strictness, least to most: when policies combine or findings overlap, the strictest action wins. */
export const CONTENT_ACTION_STRICTNESS: Readonly<Record<ContentAction, number>> = Object.freeze({ allow: 0, log: 1, tokenize: 2, mask: 3, block: 4 });

/** The stricter of two actions (block > mask > tokenize > log > allow). */
export function stricterAction(a: ContentAction, b: ContentAction): ContentAction {
  return CONTENT_ACTION_STRICTNESS[a] >= CONTENT_ACTION_STRICTNESS[b] ? a : b;
}

/** How many findings of a type, in a direction, got an action: what manifests and metrics hold — never a value. */
export interface ContentFindingCount {
  /** A built-in type, `custom:<name>` or `deny_terms`. */
  type: string;
  direction: 'input' | 'output';
  action: ContentAction;
  count: number;
}

/**
 * What a content policy did to one direction of a request: evidence without content (issue 36 item 7). Detector
 * versions say what looked; counts say what was found and done; the digest (sha256 of the content as it was sent on:
 * the request as the provider received it, the answer as the client received it) lets an auditor match a logged
 * transformed text without the log holding it. Never a matched value, a placeholder or a mapping.
 */
export interface TransformationManifest {
  detectors: Record<string, string>;
  findings: ContentFindingCount[];
  /** Null when nothing was changed (the content went on as it came). */
  digest: string | null;
  /** Placeholders made (input) or recovered and left unresolved (output); left out when the policy tokenizes nothing. */
  placeholders?: { created?: number; resolved?: number; unresolved?: number };
}

/** The policy a request was admitted under: recorded on RequestAdmitted (ids and versions, never content). */
export interface AppliedContentPolicy {
  /** Every policy in force, with where it was attached (tenant, key, alias) and its version. */
  sources: Array<{ policyId: string; version: number; attachedTo: 'tenant' | 'key' | 'alias' }>;
  /** What the input checks did (RequestAdmitted, and RequestRejected for a block). */
  manifest?: TransformationManifest;
}
