import type { DomainEvent } from './event.js';

/** Token counts of one attempt. `input` includes cached and cache-write tokens; `reasoning` is part of `output`. */
export interface TokenUsage {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
}

/** provider: reported by the upstream. counted: counted by the gateway from what it relayed. estimated: guessed. */
export type UsageEvidence = 'provider' | 'counted' | 'estimated';

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
    operation: 'chat' | 'embeddings';
    stream: boolean;
    estimatedInputTokens: number;
    reservedOutputTokens: number;
    idempotencyKey: string | null;
  }
>;

export type RequestRejected = DomainEvent<'RequestRejected', { requestId: string; reason: string; status: number; code: string }>;

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
  }
>;

export type RequestEvent = RequestAdmitted | RequestRejected | AttemptFinished | RequestCompleted;
export const REQUEST_EVENT_TYPES = ['RequestAdmitted', 'RequestRejected', 'AttemptFinished', 'RequestCompleted'] as const;

export const requestStream = (requestId: string) => `request-${requestId}`;
