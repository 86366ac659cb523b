import { Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { AttemptFinished, AttemptOutcome, TokenUsage, UsageEvidence } from '../../../events/request-events.js';
import { ZERO_USAGE, type ChatResponse, type StreamEvent } from '../../canonical/chat-response.js';
import { type ChatRequest, requiredCapabilities } from '../../canonical/chat-request.js';
import { GatewayError } from '../../canonical/gateway-error.js';
import { ProviderError } from '../../canonical/provider-error.js';
import { estimateInputTokens } from '../../canonical/token-estimate.js';
import type { GatewayAuthenticator } from '../../access/gateway-authenticator.js';
import type { ProviderAdapters } from '../../providers/provider-adapters.js';
import type { UpstreamPools } from '../../providers/upstream-pools.js';
import type { ResolvedAlias } from '../../../projections/routing-snapshot/routing-snapshot.js';
import type { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/routing-snapshot.projection.js';
import { mayUseAlias, type Principal } from '../../../projections/key-index/principal.js';
import type { GroupCommitter } from '../../../src/kernel/event-store/group-committer.js';
import type { ClientFormat, ResponseIdentity } from '../formats/client-format.js';
import { ZERO_COST, attemptCost, sumCosts } from '../pricing/attempt-cost.js';
import type { LatencyTracker } from '../routing/latency-tracker.js';
import type { RouteCandidate, RoutePlanner } from '../routing/route-planner.js';
import type { DurabilityProfile } from './durability.js';
import { OutputMeter } from './output-meter.js';
import { RequestJournal } from './request-journal.js';
import { SseResponse } from './sse-response.js';

export interface PipelineSettings {
  durability: DurabilityProfile;
  nodeId: string;
  /** Whole-request deadline. */
  requestTimeoutMs: number;
  /** Streams: time to the first token, unless the alias sets its own. */
  ttftTimeoutMs: number;
  /** Streams: most time between two chunks. */
  idleTimeoutMs: number;
  /** Attempts per request when the alias does not set maxAttempts. */
  maxAttempts: number;
}

export interface ChatExchange {
  requestId: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  raw: ServerResponse;
}

/** What an attempt produced: a response, a failure, or (for streams) a relay already under way. */
type AttemptResult =
  | { kind: 'answered'; response: ChatResponse; usage: TokenUsage; evidence: UsageEvidence }
  | { kind: 'streamed'; usage: TokenUsage; evidence: UsageEvidence; outcome: AttemptOutcome; error: ProviderError | null }
  | { kind: 'failed'; error: ProviderError; usage: TokenUsage; evidence: UsageEvidence };

interface RequestContext {
  exchange: ChatExchange;
  format: ClientFormat;
  principal: Principal;
  request: ChatRequest;
  alias: ResolvedAlias;
  identity: ResponseIdentity;
  journal: RequestJournal;
  estimatedInputTokens: number;
  admittedAt: Date;
  started: number;
  /** Aborted when the client goes away or the request deadline passes. */
  abort: AbortController;
  sse: SseResponse | null;
  strategyReason: string;
  candidateIds: string[];
  /** What each finished attempt used and cost, for RequestCompleted's totals. */
  settled: Array<{ usage: TokenUsage; cost: string }>;
}

/**
 * The inference pipeline (DESIGN §6): authenticate → validate → resolve the alias on one snapshot →
 * plan routes → append RequestAdmitted → attempts with fallback → relay → settle → commit the terminal
 * events before the last byte → respond.
 */
export class ChatPipeline {
  private readonly logger = new Logger('ChatPipeline');

  constructor(
    private readonly auth: GatewayAuthenticator,
    private readonly routing: RoutingSnapshotProjection,
    private readonly planner: RoutePlanner,
    private readonly adapters: ProviderAdapters,
    private readonly pools: UpstreamPools,
    private readonly committer: GroupCommitter,
    private readonly latency: LatencyTracker,
    private readonly settings: PipelineSettings,
  ) {}

  /**
   * Handles one chat request and writes the response. Throws a GatewayError only before anything was
   * written (the caller renders it in the client format); afterwards every outcome is written here.
   */
  async handle(exchange: ChatExchange, format: ClientFormat): Promise<void> {
    const principal = this.auth.authenticate(exchange.headers, 'inference');
    const request = format.parseChat(exchange.body);
    const snapshot = this.routing.current; // captured once: a reload never changes this request
    const alias = snapshot.aliases.get(request.model);
    if (!alias || !mayUseAlias(principal, alias.name) || (alias.visibility === 'private' && principal.aliases === null)) {
      throw new GatewayError(404, 'model_not_found', `The model '${request.model}' does not exist or you do not have access to it.`, 'model');
    }
    const estimatedInputTokens = estimateInputTokens(request);
    const admittedAt = new Date();
    const plan = this.planner.plan({
      alias,
      needs: requiredCapabilities(request),
      estimatedInputTokens,
      reservedOutputTokens: request.maxOutputTokens ?? 1024,
      at: admittedAt,
    });
    const candidates = this.honouring(plan.candidates, request);
    if (candidates.length === 0) throw this.noRoute(alias, plan.skipped, request);

    const journal = new RequestJournal(this.committer, this.settings.durability, exchange.requestId, {
      actor: `key:${principal.keyId}`,
      correlationId: exchange.requestId,
      nodeId: this.settings.nodeId,
    });
    await journal.admit({
      requestId: exchange.requestId,
      tenantId: principal.tenantId,
      keyId: principal.keyId,
      alias: alias.name,
      aliasVersion: alias.version,
      snapshotPosition: snapshot.version,
      clientFormat: format.name,
      operation: 'chat',
      stream: request.stream,
      estimatedInputTokens,
      reservedOutputTokens: request.maxOutputTokens ?? 0,
      idempotencyKey: single(exchange.headers['idempotency-key']) ?? null,
    });

    const ctx: RequestContext = {
      exchange, format, principal, request, alias, journal, estimatedInputTokens, admittedAt,
      identity: { id: format.responseId(exchange.requestId), created: Math.floor(admittedAt.getTime() / 1000), model: alias.name },
      started: Date.now(),
      abort: new AbortController(),
      sse: request.stream ? new SseResponse(exchange.raw, { 'x-request-id': exchange.requestId }) : null,
      strategyReason: plan.reason,
      candidateIds: candidates.map((c) => c.deployment.id),
      settled: [],
    };
    const deadline = setTimeout(() => ctx.abort.abort(new ProviderError('timeout', 'the request deadline passed')), this.settings.requestTimeoutMs);
    const onGone = () => ctx.abort.abort(new ProviderError('cancelled', 'the client disconnected'));
    if (ctx.sse) ctx.sse.onClientGone(onGone);
    else exchange.raw.on('close', () => !exchange.raw.writableFinished && onGone());
    try {
      await this.run(ctx, candidates);
    } finally {
      clearTimeout(deadline);
    }
  }

  private async run(ctx: RequestContext, candidates: RouteCandidate[]): Promise<void> {
    const maxAttempts = ctx.alias.policy.maxAttempts ?? this.settings.maxAttempts;
    const tried: Array<{ deployment: string; errorClass: string }> = [];
    let lastError: ProviderError | null = null;
    for (const candidate of candidates.slice(0, maxAttempts)) {
      if (ctx.abort.signal.aborted) break;
      const attempt = ctx.journal.attemptCount + 1;
      const started = Date.now();
      const result = ctx.request.stream ? await this.streamAttempt(ctx, candidate) : await this.bufferedAttempt(ctx, candidate);
      const latencyMs = Date.now() - started;
      const error = result.kind === 'failed' ? result.error : result.kind === 'streamed' ? result.error : null;
      const outcome: AttemptOutcome =
        result.kind === 'answered' ? 'success' : result.kind === 'streamed' ? result.outcome : error?.errorClass === 'cancelled' ? 'cancelled' : 'failed';
      this.recordAttempt(ctx, candidate, attempt, outcome, error, result.usage, result.evidence, latencyMs);
      if (outcome === 'success') this.latency.observe(candidate.deployment.id, latencyMs);

      if (result.kind === 'answered') return this.finishBuffered(ctx, result.response, result.usage);
      if (result.kind === 'streamed') return this.finishStream(ctx, result.outcome, result.usage, result.error);
      lastError = result.error;
      tried.push({ deployment: candidate.deployment.id, errorClass: result.error.errorClass });
      if (!result.error.fallbackable || ctx.abort.signal.aborted) break;
    }
    const failure = this.toClientError(ctx, lastError, tried);
    await this.complete(ctx, failure.status === 499 ? 'cancelled' : 'failed', failure.status, failure.code);
    if (ctx.sse?.clientGone || (!ctx.sse && ctx.exchange.raw.destroyed)) return;
    throw failure;
  }

  private async bufferedAttempt(ctx: RequestContext, candidate: RouteCandidate): Promise<AttemptResult> {
    const adapter = this.adapters.for(candidate.deployment.provider.type)!;
    const attemptAbort = linkedAbort(ctx.abort.signal);
    try {
      const target = await this.pools.target(candidate.deployment);
      const response = await adapter.chat({
        request: ctx.request,
        deployment: candidate.deployment,
        dispatcher: target.dispatcher,
        baseUrl: target.baseUrl,
        signal: attemptAbort.signal,
        headersTimeoutMs: Math.max(1, this.settings.requestTimeoutMs - (Date.now() - ctx.started)),
        idleTimeoutMs: this.settings.idleTimeoutMs,
      });
      if (response.usage) return { kind: 'answered', response, usage: response.usage, evidence: 'provider' };
      const meter = new OutputMeter();
      for (const choice of response.choices) {
        meter.observe({ type: 'text', choice: choice.index, text: choice.text });
        for (const call of choice.toolCalls) meter.observe({ type: 'tool_call', choice: choice.index, index: 0, id: call.id, name: call.name, arguments: call.arguments });
      }
      return { kind: 'answered', response, ...meter.usage(ctx.estimatedInputTokens) };
    } catch (error) {
      return { kind: 'failed', error: asProviderError(error, ctx.abort.signal), usage: ZERO_USAGE, evidence: 'provider' };
    } finally {
      attemptAbort.dispose();
    }
  }

  private async streamAttempt(ctx: RequestContext, candidate: RouteCandidate): Promise<AttemptResult> {
    const adapter = this.adapters.for(candidate.deployment.provider.type)!;
    const attemptAbort = linkedAbort(ctx.abort.signal);
    const meter = new OutputMeter();
    const sse = ctx.sse!;
    const encoder = ctx.format.streamEncoder(ctx.identity, ctx.request);
    const ttftMs = ctx.alias.policy.ttftTimeoutMs ?? this.settings.ttftTimeoutMs;
    let iterator: AsyncIterator<StreamEvent> | null = null;
    try {
      const target = await this.pools.target(candidate.deployment);
      const upstream = await adapter.chatStream({
        request: ctx.request,
        deployment: candidate.deployment,
        dispatcher: target.dispatcher,
        baseUrl: target.baseUrl,
        signal: attemptAbort.signal,
        headersTimeoutMs: ttftMs,
        idleTimeoutMs: this.settings.idleTimeoutMs,
      });
      iterator = upstream.events[Symbol.asyncIterator]();
      // Until the first semantic output reaches the client, a failure may still fall back.
      const ttft = setTimeout(() => attemptAbort.abort(new ProviderError('timeout', 'no first token in time')), ttftMs);
      const pending: StreamEvent[] = [];
      try {
        for (;;) {
          const next = await iterator.next();
          if (next.done) {
            if (!meter.sawFinish) throw new ProviderError('malformed_response', 'the provider stream ended without any output');
            break;
          }
          meter.observe(next.value);
          pending.push(next.value);
          if (meter.sawOutput) break;
        }
      } finally {
        clearTimeout(ttft);
      }
      sse.open(encoder.contentType);
      for (const event of pending) await sse.write(encoder.encode(event));
      // Past the first output: no retry, no fallback; a failure ends the stream with an error event.
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        meter.observe(next.value);
        await sse.write(encoder.encode(next.value));
      }
      if (!meter.sawFinish) throw new ProviderError('malformed_response', 'the provider stream ended without a finish reason');
      const { usage, evidence } = meter.usage(ctx.estimatedInputTokens);
      return { kind: 'streamed', usage, evidence, outcome: 'success', error: null };
    } catch (error) {
      const failure = asProviderError(error, attemptAbort.signal);
      void iterator?.return?.().catch(() => undefined);
      if (!sse.isOpen) {
        return { kind: 'failed', error: failure, ...meter.usage(ctx.estimatedInputTokens) };
      }
      const { usage, evidence } = meter.usage(ctx.estimatedInputTokens);
      const cancelled = failure.errorClass === 'cancelled' || sse.clientGone;
      return { kind: 'streamed', usage, evidence, outcome: cancelled ? 'cancelled' : 'failed_partial', error: failure };
    } finally {
      attemptAbort.dispose();
    }
  }

  private async finishBuffered(ctx: RequestContext, response: ChatResponse, usage: TokenUsage): Promise<void> {
    try {
      await this.complete(ctx, 'success', 200, null);
    } catch (error) {
      this.logger.error(`request ${ctx.exchange.requestId}: terminal events not committed: ${(error as Error).message}`);
      throw new GatewayError(503, 'durability_unavailable', 'The answer could not be recorded durably; it was not delivered. Retry the request.');
    }
    const body = JSON.stringify(ctx.format.encodeChat(response, ctx.identity, usage));
    if (ctx.exchange.raw.destroyed) return;
    ctx.exchange.raw.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': ctx.exchange.requestId,
    });
    ctx.exchange.raw.end(body);
  }

  private async finishStream(ctx: RequestContext, outcome: AttemptOutcome, usage: TokenUsage, error: ProviderError | null): Promise<void> {
    const sse = ctx.sse!;
    const encoder = ctx.format.streamEncoder(ctx.identity, ctx.request);
    if (outcome !== 'success') {
      const status = outcome === 'cancelled' ? 499 : 502;
      const clientError = new GatewayError(502, 'upstream_error', `The provider failed after the stream started: ${error?.message ?? 'unknown error'}`);
      await this.complete(ctx, outcome === 'cancelled' ? 'cancelled' : 'failed', status, outcome === 'cancelled' ? 'client_disconnected' : 'upstream_error').catch(
        (commitError: Error) => this.logger.error(`request ${ctx.exchange.requestId}: terminal events not committed: ${commitError.message}`),
      );
      if (!sse.clientGone) {
        await sse.write(encoder.error(clientError));
        sse.end();
      }
      return;
    }
    try {
      await this.complete(ctx, 'success', 200, null);
    } catch (commitError) {
      this.logger.error(`request ${ctx.exchange.requestId}: terminal events not committed: ${(commitError as Error).message}`);
      await sse.write(encoder.error(new GatewayError(503, 'durability_unavailable', 'The answer could not be recorded durably.')));
      sse.end();
      return;
    }
    sse.end(encoder.finish(usage));
  }

  private recordAttempt(
    ctx: RequestContext, candidate: RouteCandidate, attempt: number, outcome: AttemptOutcome,
    error: ProviderError | null, usage: TokenUsage, evidence: UsageEvidence, latencyMs: number,
  ): void {
    const deployment = candidate.deployment;
    const cost = usage === ZERO_USAGE ? ZERO_COST : attemptCost(usage, candidate.price.table);
    const data: AttemptFinished['data'] = {
      requestId: ctx.exchange.requestId,
      attempt,
      tenantId: ctx.principal.tenantId,
      keyId: ctx.principal.keyId,
      alias: ctx.alias.name,
      deploymentId: deployment.id,
      providerId: deployment.provider.id,
      model: deployment.model,
      outcome,
      errorClass: error?.errorClass ?? null,
      httpStatus: error ? error.httpStatus : 200,
      usage,
      usageEvidence: evidence,
      cost,
      priceVersion: candidate.price.version,
      latencyMs,
      ttftMs: null,
      providerRequestId: null,
      routing: { strategy: ctx.alias.strategy, candidates: ctx.candidateIds, reason: ctx.strategyReason },
    };
    ctx.journal.recordAttempt(data);
    ctx.settled.push({ usage, cost: cost.total });
  }

  private complete(ctx: RequestContext, status: 'success' | 'failed' | 'cancelled', httpStatus: number, errorCode: string | null): Promise<void> {
    const attempts = ctx.settled;
    const usage = attempts.reduce<TokenUsage>(
      (sum, a) => ({
        input: sum.input + a.usage.input,
        cachedInput: sum.cachedInput + a.usage.cachedInput,
        cacheWrite: sum.cacheWrite + a.usage.cacheWrite,
        output: sum.output + a.usage.output,
        reasoning: sum.reasoning + a.usage.reasoning,
      }),
      { ...ZERO_USAGE },
    );
    return ctx.journal.complete({
      requestId: ctx.exchange.requestId,
      status,
      httpStatus,
      errorCode,
      fallbackDepth: Math.max(0, attempts.length - 1),
      cacheHit: false,
      totals: {
        usage,
        costUsd: sumCosts(attempts.map((a) => ({ ...ZERO_COST, total: a.cost }))),
        attempts: attempts.length,
        latencyMs: Date.now() - ctx.started,
      },
    });
  }

  /** Routes whose provider can honour every parameter; if none can, the request names the parameter. */
  private honouring(candidates: RouteCandidate[], request: ChatRequest): RouteCandidate[] {
    let unsupported: string | null = null;
    const kept = candidates.filter((candidate) => {
      const adapter = this.adapters.for(candidate.deployment.provider.type);
      if (!adapter) return false;
      const parameter = adapter.unsupportedParameter(request, candidate.deployment);
      unsupported ??= parameter;
      return parameter === null;
    });
    if (kept.length === 0 && unsupported) {
      throw new GatewayError(400, 'unsupported_parameter', `Unsupported parameter '${unsupported}': no route of this model can honour it.`, unsupported);
    }
    return kept;
  }

  private noRoute(alias: ResolvedAlias, skipped: Array<{ deploymentId: string; reason: string }>, request: ChatRequest): GatewayError {
    if (skipped.length > 0 && skipped.every((s) => s.reason.startsWith('lacks '))) {
      const missing = skipped[0].reason.slice('lacks '.length);
      const param = missing.includes('tools') ? 'tools' : missing.includes('vision') ? 'messages' : missing.includes('json_schema') ? 'response_format' : missing.includes('streaming') ? 'stream' : null;
      return new GatewayError(400, 'unsupported_parameter', `The model '${request.model}' cannot serve this request: its routes lack ${missing}.`, param);
    }
    if (skipped.length > 0 && skipped.every((s) => s.reason === 'context window too small')) {
      return new GatewayError(400, 'context_length_exceeded', `The request does not fit the context window of any route of '${alias.name}'.`, 'messages');
    }
    if (skipped.length > 0 && skipped.every((s) => s.reason === 'outside the allowed regions')) {
      return new GatewayError(400, 'no_compliant_provider', `No route of '${alias.name}' lies within the allowed regions.`);
    }
    return new GatewayError(503, 'all_providers_unavailable', `No route of '${alias.name}' is available right now.`, null, { 'retry-after': '1' }, {
      candidates: skipped.map((s) => ({ deployment: s.deploymentId, reason: s.reason })),
    });
  }

  private toClientError(ctx: RequestContext, error: ProviderError | null, tried: Array<{ deployment: string; errorClass: string }>): GatewayError {
    if (ctx.abort.signal.aborted && (ctx.abort.signal.reason as ProviderError)?.errorClass === 'cancelled') {
      return new GatewayError(499, 'client_disconnected', 'The client disconnected.');
    }
    if (!error) return new GatewayError(503, 'all_providers_unavailable', `No route of '${ctx.alias.name}' could be tried.`);
    if (!error.fallbackable) {
      const status = error.errorClass === 'auth' ? 502 : error.httpStatus && error.httpStatus < 500 ? error.httpStatus : 502;
      const code = error.errorClass === 'context_length' ? 'context_length_exceeded' : error.errorClass === 'content_policy' ? 'content_policy_violation' : error.errorClass === 'auth' ? 'upstream_auth_error' : 'invalid_request';
      return new GatewayError(status, code, error.errorClass === 'auth' ? 'The gateway could not authenticate with the provider.' : error.message);
    }
    if (error.errorClass === 'timeout' && ctx.abort.signal.aborted) {
      return new GatewayError(504, 'request_timeout', 'The request deadline passed before a provider answered.');
    }
    const retryAfter = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
    return new GatewayError(
      503,
      'all_providers_unavailable',
      `Every route of '${ctx.alias.name}' failed: ${tried.map((t) => `${t.deployment} (${t.errorClass})`).join(', ')}.`,
      null,
      { 'retry-after': String(retryAfter) },
      { candidates: tried },
    );
  }
}

function asProviderError(error: unknown, signal: AbortSignal): ProviderError {
  if (signal.aborted && signal.reason instanceof ProviderError) return signal.reason;
  if (error instanceof ProviderError) return error;
  return new ProviderError('unknown', 'the provider call failed unexpectedly');
}

/** An AbortController that also aborts when `parent` does (with the parent's reason). */
function linkedAbort(parent: AbortSignal): AbortController & { dispose: () => void } {
  const controller = new AbortController() as AbortController & { dispose: () => void };
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  controller.dispose = () => parent.removeEventListener('abort', onAbort);
  return controller;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
