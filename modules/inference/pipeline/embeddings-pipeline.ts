import { Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { AttemptOutcome, TokenUsage, UsageEvidence } from '../../../events/request-events.js';
import { ZERO_USAGE } from '../../canonical/chat-response.js';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../../canonical/embeddings.js';
import { GatewayError } from '../../canonical/gateway-error.js';
import { ProviderError } from '../../canonical/provider-error.js';
import { estimateTokens } from '../../canonical/token-estimate.js';
import type { GatewayAuthenticator } from '../../access/gateway-authenticator.js';
import type { ProviderAdapters } from '../../providers/provider-adapters.js';
import type { UpstreamPools } from '../../providers/upstream-pools.js';
import type { ResolvedAlias } from '../../../projections/routing-snapshot/routing-snapshot.js';
import type { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/routing-snapshot.projection.js';
import { mayUseAlias, type Principal } from '../../../projections/key-index/principal.js';
import type { GroupCommitter } from '../../../src/kernel/event-store/group-committer.js';
import { type EmbeddingEncoding, parseOpenAiEmbeddingsRequest } from '../formats/openai/openai-embeddings-request.js';
import { encodeOpenAiEmbeddings } from '../formats/openai/openai-embeddings-response.js';
import { ZERO_COST, sumCosts } from '../pricing/attempt-cost.js';
import type { LatencyTracker } from '../routing/latency-tracker.js';
import type { RouteCandidate, RoutePlanner } from '../routing/route-planner.js';
import type { DurabilityProfile } from './durability.js';
import { RequestJournal } from './request-journal.js';
import { linkedAbort } from './attempt-abort.js';
import { attemptFailure } from './attempt-failure.js';
import { GatewayFault } from './gateway-fault.js';
import { providerErrorMessageForClient, withProviderRequestId } from './provider-error-disclosure.js';
import { attemptFinished } from './attempt-finished.js';
import type { AdmissionControl } from '../../limits/admission-control.js';
import type { DeploymentHealth } from '../resilience/deployment-health.js';
import { healthSignal } from '../resilience/health-signal.js';

export interface EmbeddingsSettings {
  durability: DurabilityProfile;
  nodeId: string;
  /** Whole-request deadline (every attempt included). */
  requestTimeoutMs: number;
  /** Most time between two body chunks of an answer. */
  idleTimeoutMs: number;
  /** Attempts per request when the alias does not set maxAttempts. */
  maxAttempts: number;
}

export interface EmbeddingsExchange {
  requestId: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  raw: ServerResponse;
}

interface RequestContext {
  exchange: EmbeddingsExchange;
  principal: Principal;
  request: EmbeddingsRequest;
  alias: ResolvedAlias;
  journal: RequestJournal;
  estimatedInputTokens: number;
  started: number;
  abort: AbortController;
  strategyReason: string;
  candidateIds: string[];
  settled: Array<{ usage: TokenUsage; cost: string }>;
}

type AttemptResult =
  | { kind: 'answered'; response: EmbeddingsResponse; usage: TokenUsage; evidence: UsageEvidence }
  | { kind: 'failed'; error: ProviderError }
  /** The gateway's own failure: it never feeds the breaker and is never tried elsewhere. */
  | { kind: 'fault'; fault: GatewayFault };

/**
 * `POST /v1/embeddings` (DESIGN §6, without streaming): authenticate → validate → resolve the alias on
 * one snapshot → routes whose deployment declares `embeddings` and whose adapter can embed →
 * RequestAdmitted → attempts with fallback on transient errors → commit AttemptFinished and
 * RequestCompleted → only then send the vectors. Embeddings bill input tokens only.
 */
export class EmbeddingsPipeline {
  private readonly logger = new Logger('EmbeddingsPipeline');

  constructor(
    private readonly auth: GatewayAuthenticator,
    private readonly routing: RoutingSnapshotProjection,
    private readonly planner: RoutePlanner,
    private readonly adapters: ProviderAdapters,
    private readonly pools: UpstreamPools,
    private readonly committer: GroupCommitter,
    private readonly latency: LatencyTracker,
    private readonly admission: AdmissionControl,
    private readonly health: DeploymentHealth,
    private readonly settings: EmbeddingsSettings,
  ) {}

  /** Throws a GatewayError only before anything was written (the controller renders it); writes every other outcome. */
  async handle(exchange: EmbeddingsExchange): Promise<void> {
    const principal = this.auth.authenticate(exchange.headers, 'inference');
    const { request, encoding } = parseOpenAiEmbeddingsRequest(exchange.body);
    const snapshot = this.routing.current; // captured once: a reload never changes this request
    const alias = snapshot.aliases.get(request.model);
    if (!alias || !mayUseAlias(principal, alias.name) || (alias.visibility === 'private' && principal.aliases === null)) {
      throw new GatewayError(404, 'model_not_found', `The model '${request.model}' does not exist or you do not have access to it.`, 'model');
    }
    const perInput = request.inputs.map((text) => Math.max(1, estimateTokens(text)));
    const estimatedInputTokens = perInput.reduce((sum, n) => sum + n, 0);
    const admittedAt = new Date();
    // The context window bounds each input, not the batch: plan with the longest one.
    const plan = this.planner.plan({
      alias,
      needs: ['embeddings'],
      estimatedInputTokens: Math.max(...perInput),
      reservedOutputTokens: 0,
      at: admittedAt,
      affinity: { principal: `${principal.tenantId}/${principal.keyId}`, sessionId: null, requestId: exchange.requestId },
    });
    const candidates = plan.candidates.filter((candidate) => this.adapters.for(candidate.deployment.provider.type)?.embed !== undefined);
    if (candidates.length === 0) throw noRoute(alias, plan.skipped, plan.candidates.length > 0);

    const abort = new AbortController();
    exchange.raw.on('close', () => {
      if (!exchange.raw.writableFinished) abort.abort(new ProviderError('cancelled', 'the client disconnected'));
    });
    // The same concurrency permits as chat: node-wide, per key and per tenant; released on every path.
    const permit = await this.admission.admit(principal, false, abort.signal);
    try {
      await this.admitted(exchange, principal, request, alias, snapshot.version, candidates, plan.reason, estimatedInputTokens, encoding, abort);
    } finally {
      permit.release();
    }
  }

  private async admitted(
    exchange: EmbeddingsExchange, principal: Principal, request: EmbeddingsRequest, alias: ResolvedAlias, snapshotVersion: number,
    candidates: RouteCandidate[], strategyReason: string, estimatedInputTokens: number, encoding: EmbeddingEncoding, abort: AbortController,
  ): Promise<void> {

    const journal = RequestJournal.forKey(this.committer, this.settings.durability, this.settings.nodeId, exchange.requestId, principal.keyId);
    await journal.admitRequest(principal, alias, snapshotVersion, exchange.headers, {
      clientFormat: 'openai',
      operation: 'embeddings',
      stream: false,
      estimatedInputTokens,
      reservedOutputTokens: 0,
    });
    const ctx: RequestContext = {
      exchange, principal, request, alias, journal, estimatedInputTokens,
      started: Date.now(),
      abort,
      strategyReason,
      candidateIds: candidates.map((c) => c.deployment.id),
      settled: [],
    };
    const deadline = setTimeout(() => ctx.abort.abort(new ProviderError('timeout', 'the request deadline passed')), this.settings.requestTimeoutMs);
    try {
      await this.run(ctx, candidates, encoding);
    } finally {
      clearTimeout(deadline);
    }
  }

  private async run(ctx: RequestContext, candidates: RouteCandidate[], encoding: EmbeddingEncoding): Promise<void> {
    const maxAttempts = ctx.alias.policy.maxAttempts ?? this.settings.maxAttempts;
    const tried: Array<{ deployment: string; errorClass: string }> = [];
    let lastError: ProviderError | null = null;
    let attempts = 0;
    for (const candidate of candidates) {
      if (ctx.abort.signal.aborted || attempts >= maxAttempts) break;
      // Breakers and retry-after throttles apply to embeddings too, and its outcomes feed them.
      const pass = this.health.tryPass(candidate.deployment.id);
      if (!('trial' in pass)) {
        tried.push({ deployment: candidate.deployment.id, errorClass: pass.reason });
        continue;
      }
      attempts++;
      const started = Date.now();
      const result = await this.attempt(ctx, candidate);
      if (result.kind === 'fault') {
        this.health.finish(pass, 'neutral');
        return this.failWithFault(ctx, candidate, result.fault);
      }
      const latencyMs = Date.now() - started;
      const error = result.kind === 'failed' ? result.error : null;
      this.health.finish(pass, healthSignal(error ? (error.errorClass === 'cancelled' ? 'cancelled' : 'failed') : 'success', error));
      if (error?.retryAfterMs != null && (error.errorClass === 'rate_limited' || error.errorClass === 'overloaded')) {
        this.health.throttle(candidate.deployment.id, error.retryAfterMs);
      }
      if (result.kind === 'answered') {
        this.recordAttempt(ctx, candidate, 'success', null, result.usage, result.evidence, latencyMs, result.response.providerRequestId);
        this.latency.observe(candidate.deployment.id, latencyMs);
        return this.respond(ctx, result.response, result.usage, encoding);
      }
      const outcome: AttemptOutcome = result.error.errorClass === 'cancelled' ? 'cancelled' : 'failed';
      // A failed embeddings call produced nothing billable: its usage is zero.
      this.recordAttempt(ctx, candidate, outcome, result.error, ZERO_USAGE, 'provider', latencyMs, null);
      lastError = result.error;
      tried.push({ deployment: candidate.deployment.id, errorClass: result.error.errorClass });
      if (!result.error.fallbackable || ctx.abort.signal.aborted) break;
    }
    const failure = clientError(ctx, lastError, tried);
    await this.complete(ctx, failure.status === 499 ? 'cancelled' : 'failed', failure.status, failure.code);
    if (ctx.exchange.raw.destroyed) return;
    throw failure;
  }

  private async attempt(ctx: RequestContext, candidate: RouteCandidate): Promise<AttemptResult> {
    const adapter = this.adapters.for(candidate.deployment.provider.type)!;
    const attemptAbort = linkedAbort(ctx.abort.signal);
    try {
      const target = await this.pools.target(candidate.deployment);
      const response = await adapter.embed!({
        request: ctx.request,
        deployment: candidate.deployment,
        dispatcher: target.dispatcher,
        baseUrl: target.baseUrl,
        signal: attemptAbort.signal,
        headersTimeoutMs: Math.max(1, this.settings.requestTimeoutMs - (Date.now() - ctx.started)),
        idleTimeoutMs: this.settings.idleTimeoutMs,
      });
      const problem = answerProblem(ctx.request, response);
      if (problem) throw new ProviderError('malformed_response', problem);
      const provided = response.inputTokens !== null;
      const usage: TokenUsage = { ...ZERO_USAGE, input: provided ? response.inputTokens! : ctx.estimatedInputTokens };
      return { kind: 'answered', response, usage, evidence: provided ? 'provider' : 'estimated' };
    } catch (error) {
      const failure = attemptFailure(error, attemptAbort.signal);
      return failure instanceof GatewayFault ? { kind: 'fault', fault: failure } : { kind: 'failed', error: failure };
    } finally {
      attemptAbort.dispose();
    }
  }

  /** Ends the request with the gateway's own error; the deployment is not blamed and nothing else is tried. */
  private async failWithFault(ctx: RequestContext, candidate: RouteCandidate, fault: GatewayFault): Promise<void> {
    if (fault.isOurs) {
      this.logger.error(`request ${ctx.exchange.requestId}: the gateway failed during the attempt on ${candidate.deployment.id}: ${fault.describeCause()}`);
    }
    await this.complete(ctx, 'failed', fault.error.status, fault.error.code);
    if (ctx.exchange.raw.destroyed) return;
    throw fault.error;
  }

  private async respond(ctx: RequestContext, response: EmbeddingsResponse, usage: TokenUsage, encoding: EmbeddingEncoding): Promise<void> {
    try {
      await this.complete(ctx, 'success', 200, null);
    } catch (error) {
      this.logger.error(`request ${ctx.exchange.requestId}: terminal events not committed: ${(error as Error).message}`);
      throw new GatewayError(503, 'durability_unavailable', 'The answer could not be recorded durably; it was not delivered. Retry the request.');
    }
    const body = JSON.stringify(encodeOpenAiEmbeddings(response.vectors, encoding, ctx.alias.name, usage.input));
    if (ctx.exchange.raw.destroyed) return;
    ctx.exchange.raw.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': ctx.exchange.requestId,
    });
    ctx.exchange.raw.end(body);
  }

  private recordAttempt(
    ctx: RequestContext, candidate: RouteCandidate, outcome: AttemptOutcome, error: ProviderError | null,
    usage: TokenUsage, evidence: UsageEvidence, latencyMs: number, providerRequestId: string | null,
  ): void {
    const data = attemptFinished({
      requestId: ctx.exchange.requestId, attempt: ctx.journal.attemptCount + 1, principal: ctx.principal, alias: ctx.alias, candidate,
      candidateIds: ctx.candidateIds, routingReason: ctx.strategyReason, outcome, error, usage, evidence, latencyMs, ttftMs: null, providerRequestId,
    });
    ctx.journal.recordAttempt(data);
    ctx.settled.push({ usage, cost: data.cost.total });
  }

  private complete(ctx: RequestContext, status: 'success' | 'failed' | 'cancelled', httpStatus: number, errorCode: string | null): Promise<void> {
    const input = ctx.settled.reduce((sum, a) => sum + a.usage.input, 0);
    return ctx.journal.complete({
      requestId: ctx.exchange.requestId,
      status,
      httpStatus,
      errorCode,
      fallbackDepth: Math.max(0, ctx.settled.length - 1),
      cacheHit: false,
      totals: {
        usage: { ...ZERO_USAGE, input },
        costUsd: sumCosts(ctx.settled.map((a) => ({ ...ZERO_COST, total: a.cost }))),
        attempts: ctx.settled.length,
        latencyMs: Date.now() - ctx.started,
      },
    });
  }
}

/** An answer the client could not use: a vector missing, or the requested `dimensions` silently ignored. */
function answerProblem(request: EmbeddingsRequest, response: EmbeddingsResponse): string | null {
  if (response.vectors.length !== request.inputs.length || response.vectors.some((v) => !Array.isArray(v) || v.length === 0)) {
    return 'the provider did not return one embedding per input';
  }
  if (request.dimensions !== null && response.vectors.some((v) => v.length !== request.dimensions)) {
    return `the provider returned vectors of ${response.vectors[0].length} dimensions, not the ${request.dimensions} requested`;
  }
  return null;
}

function noRoute(alias: ResolvedAlias, skipped: Array<{ deploymentId: string; reason: string }>, adapterless: boolean): GatewayError {
  if (adapterless || (skipped.length > 0 && skipped.every((s) => s.reason.startsWith('lacks ')))) {
    return new GatewayError(400, 'invalid_request', `The model '${alias.name}' does not serve embeddings.`, 'model');
  }
  if (skipped.length > 0 && skipped.every((s) => s.reason === 'context window too small')) {
    return new GatewayError(400, 'context_length_exceeded', `An input is longer than every route of '${alias.name}' accepts.`, 'input');
  }
  if (skipped.length > 0 && skipped.every((s) => s.reason === 'outside the allowed regions')) {
    return new GatewayError(400, 'no_compliant_provider', `No route of '${alias.name}' lies within the allowed regions.`);
  }
  return new GatewayError(503, 'all_providers_unavailable', `No route of '${alias.name}' is available right now.`, null, { 'retry-after': '1' }, {
    candidates: skipped.map((s) => ({ deployment: s.deploymentId, reason: s.reason })),
  });
}

function clientError(ctx: RequestContext, error: ProviderError | null, tried: Array<{ deployment: string; errorClass: string }>): GatewayError {
  if (ctx.abort.signal.aborted && (ctx.abort.signal.reason as ProviderError)?.errorClass === 'cancelled') {
    return new GatewayError(499, 'client_disconnected', 'The client disconnected.');
  }
  if (!error) return new GatewayError(503, 'all_providers_unavailable', `No route of '${ctx.alias.name}' could be tried.`);
  if (!error.fallbackable) {
    if (error.errorClass === 'auth') return new GatewayError(502, 'upstream_auth_error', providerErrorMessageForClient(error));
    const status = error.httpStatus && error.httpStatus < 500 ? error.httpStatus : 502;
    const code = error.errorClass === 'context_length' ? 'context_length_exceeded' : error.errorClass === 'content_policy' ? 'content_policy_violation' : 'invalid_request';
    return new GatewayError(status, code, providerErrorMessageForClient(error));
  }
  if (error.errorClass === 'timeout' && ctx.abort.signal.aborted) {
    return new GatewayError(504, 'request_timeout', 'The request deadline passed before a provider answered.');
  }
  const retryAfter = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
  return withProviderRequestId(new GatewayError(
    503,
    'all_providers_unavailable',
    `Every route of '${ctx.alias.name}' failed: ${tried.map((t) => `${t.deployment} (${t.errorClass})`).join(', ')}.`,
    null,
    { 'retry-after': String(retryAfter) },
    { candidates: tried },
  ), error);
}

