import type { AppliedContentPolicy, TransformationManifest } from './content-policy-events.js';
import type { DomainEvent } from './event.js';

/** Token counts of one attempt. `input` includes cached and cache-write tokens; `reasoning` is part of `output`. */
export interface TokenUsage {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

/**
 * provider: reported by the upstream. counted: counted by the gateway from what it relayed. estimated:
 * guessed. implausible: the upstream reported counts the gateway could not believe (not non-negative
 * integers, above the request's plausible bound, or parts that disagree); those counts were replaced by
 * the gateway's own (see AttemptFinished.diagnostics), so the attempt is billed within the bound.
 */
export type UsageEvidence = 'provider' | 'counted' | 'estimated' | 'implausible';

/** What an attempt's record says beyond its counts: why a provider's usage was not believed. */
export interface AttemptDiagnostics {
  /** The first reason, and the provider's fields as reported, each a string of at most 32 characters. */
  implausibleUsage?: { reason: string; reported: Record<string, string> };
}

export type AttemptOutcome = 'success' | 'failed' | 'failed_partial' | 'cancelled';

export interface AttemptCost {
  input: string;
  cachedInput: string;
  cacheWrite: string;
  output: string;
  total: string;
  currency: 'USD';
}

export type RequestAdmitted = DomainEvent<
  'RequestAdmitted',
  {
    requestId: string;
    tenantId: string;
    keyId: string;
    alias: string;
    aliasVersion: number;
    snapshotPosition: number;
    /** `responses` (OpenAI Responses) was added without a schema change: older events keep their values. */
    clientFormat: 'openai' | 'anthropic' | 'responses';
    /** `moderation`: a content policy's moderation check, a request of its own (its metadata's causationId names the checked request). */
    operation: 'chat' | 'embeddings' | 'moderation';
    stream: boolean;
    estimatedInputTokens: number;
    reservedOutputTokens: number;
    idempotencyKey: string | null;
    /** The content policies in force for the request (ids, versions, where attached); left out when none applies. */
    contentPolicy?: AppliedContentPolicy;
  }
>;

/**
 * A request refused at admission, after authentication (rate or concurrency limit, budget, no eligible
 * route, an alias the key may not call): nothing was dispatched or billed. `reason` is the message the
 * client was given; `scope` the exhausted limit when one was (`key.rpm`, `tenant:acme`). The principal
 * and alias fields were added later: events recorded before carry only the first four.
 */
export type RequestRejected = DomainEvent<
  'RequestRejected',
  {
    requestId: string;
    reason: string;
    status: number;
    code: string;
    tenantId?: string;
    keyId?: string;
    /** The alias the client named. */
    alias?: string;
    operation?: 'chat' | 'embeddings' | 'moderation';
    scope?: string | null;
    /** A content policy's block (code `content_policy_violation`): the policies in force and what the input checks found. */
    contentPolicy?: AppliedContentPolicy;
  }
>;

export type AttemptFinished = DomainEvent<
  'AttemptFinished',
  {
    requestId: string;
    attempt: number;
    /** Denormalised from RequestAdmitted so that billing needs only this event. */
    tenantId: string;
    keyId: string;
    alias: string;
    deploymentId: string;
    providerId: string;
    model: string;
    outcome: AttemptOutcome;
    errorClass: string | null;
    /** Which gateway deadline ended the attempt (connect, ttft, idle, stream, request, write_progress), if one did. */
    deadline?: string | null;
    httpStatus: number | null;
    usage: TokenUsage;
    usageEvidence: UsageEvidence;
    cost: AttemptCost;
    priceVersion: number;
    latencyMs: number;
    ttftMs: number | null;
    providerRequestId: string | null;
    /** Why this deployment was chosen (strategy and candidates). */
    routing: { strategy: string; candidates: string[]; reason: string };
    /**
     * Schema 2: present when there is something to say (an implausible usage); never content. Schema 2
     * also guarantees `usage` holds non-negative integers within the plausible bound (schema-1 events are
     * upcast to that: events/upcasters.ts).
     */
    diagnostics?: AttemptDiagnostics;
    /**
     * Present when the request asked for parameters this deployment accepts without sending them (hints its wire
     * format has no field for, per the provider's parameter table: strict tools on Gemini, eager_input_streaming
     * off Anthropic, cache_control on OpenAI): the per-request note that nothing was dropped unseen. Added later
     * without a schema change; older events lack it.
     */
    unsentParameters?: string[];
  }
>;

export type RequestCompleted = DomainEvent<
  'RequestCompleted',
  {
    requestId: string;
    status: 'success' | 'failed' | 'cancelled';
    httpStatus: number;
    errorCode: string | null;
    fallbackDepth: number;
    cacheHit: boolean;
    totals: { usage: TokenUsage; costUsd: string; attempts: number; latencyMs: number };
    /** What the output checks and placeholder recovery did (issue 36); left out when no content policy applied. */
    contentPolicy?: TransformationManifest;
  }
>;

/**
 * The request was answered from the exact cache: no provider was called, so nothing is billed, and
 * `savedCostUsd` is what the attempt that produced the cached answer cost (the saving the ledger shows).
 * The answer itself is content and stays in the cache, never here.
 */
export type RequestServedFromCache = DomainEvent<
  'RequestServedFromCache',
  {
    requestId: string;
    tenantId: string;
    keyId: string;
    alias: string;
    aliasVersion: number;
    /** The request whose provider attempt produced the cached answer. */
    sourceRequestId: string;
    /** Where that answer came from, and the price version its cost was computed with. */
    deploymentId: string;
    providerId: string;
    model: string;
    priceVersion: number;
    /** The usage the cached answer reports to the client (the provider consumed none of it now). */
    usage: TokenUsage;
    /** Exact decimal string. */
    savedCostUsd: string;
  }
>;

export type RequestEvent = RequestAdmitted | RequestRejected | AttemptFinished | RequestServedFromCache | RequestCompleted;
export const REQUEST_EVENT_TYPES = ['RequestAdmitted', 'RequestRejected', 'AttemptFinished', 'RequestServedFromCache', 'RequestCompleted'] as const;

export const requestStream = (requestId: string) => `request-${requestId}`;
