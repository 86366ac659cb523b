import { Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { AttemptOutcome, TokenUsage, UsageEvidence } from '../../../events/request-events.js';
import { ZERO_USAGE, type ChatResponse, type StreamEvent } from '../../canonical/chat-response.js';
import { type ChatRequest, requiredCapabilities } from '../../canonical/chat-request.js';
import { GatewayError } from '../../canonical/gateway-error.js';
import { ProviderError } from '../../canonical/provider-error.js';
import { estimateInputTokens } from '../../canonical/token-estimate.js';
import type { GatewayAuthenticator } from '../../access/gateway-authenticator.js';
import type { AdmissionControl } from '../../limits/admission-control.js';
import type { DeploymentConcurrency } from '../../limits/deployment-concurrency.js';
import type { Permit } from '../../limits/permit.js';
import type { ProviderAdapters } from '../../providers/provider-adapters.js';
import type { UpstreamPools } from '../../providers/upstream-pools.js';
import type { ResolvedAlias } from '../../../projections/routing-snapshot/routing-snapshot.js';
import type { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/routing-snapshot.projection.js';
import { mayUseAlias, type Principal } from '../../../projections/key-index/principal.js';
import type { GroupCommitter } from '../../../src/kernel/event-store/group-committer.js';
import type { ClientFormat, ResponseIdentity } from '../formats/client-format.js';
import type { ClientStreamEncoder } from '../formats/client-stream-encoder.js';
import { ZERO_COST, sumCosts } from '../pricing/attempt-cost.js';
import { waitFor } from '../resilience/backoff.js';
import type { HealthSignal } from '../resilience/circuit-breaker.js';
import { BACKSTOP_SLACK_MS, DEADLINE_CODES, DeadlineExceeded, deadlineOf } from '../resilience/deadlines.js';
import type { DeploymentHealth, HealthPass, Unavailable } from '../resilience/deployment-health.js';
import type { ResilienceSettings } from '../resilience/resilience-settings.js';
import { type NextStep, afterFailure } from '../resilience/retry-policy.js';
import type { LatencyTracker } from '../routing/latency-tracker.js';
import type { RouteCandidate, RoutePlan, RoutePlanner } from '../routing/route-planner.js';
import type { DurabilityProfile } from './durability.js';
import { OutputMeter } from './output-meter.js';
import { RequestJournal } from './request-journal.js';
import { SseResponse } from './sse-response.js';
import { headerValue, linkedAbort } from './attempt-abort.js';
import { attemptFailure } from './attempt-failure.js';
import { GatewayFault } from './gateway-fault.js';
import { providerErrorMessageForClient, withProviderRequestId } from './provider-error-disclosure.js';
import { attemptFinished } from './attempt-finished.js';
import { healthSignal } from '../resilience/health-signal.js';

export interface PipelineSettings {
  durability: DurabilityProfile;
  nodeId: string;
  resilience: ResilienceSettings;
}

/** The pipeline's collaborators, injected by InferenceModule. */
export interface ChatPipelineDeps {
  auth: GatewayAuthenticator;
  routing: RoutingSnapshotProjection;
  planner: RoutePlanner;
  adapters: ProviderAdapters;
  pools: UpstreamPools;
  committer: GroupCommitter;
  latency: LatencyTracker;
  health: DeploymentHealth;
  admission: AdmissionControl;
  deploymentLoad: DeploymentConcurrency;
  /** Jitter source for backoff (tests pin it). */
  random?: () => number;
}

export interface ChatExchange {
  requestId: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  raw: ServerResponse;
}

/**
 * What an attempt produced: a response, a provider's failure, the gateway's own failure before any output
 * (`fault`), or (for streams) a relay that already reached the client, which a provider's failure or
 * the gateway's own (`fault`) may have cut short.
 */
type AttemptResult = { ttftMs: number | null; providerRequestId: string | null } & (
  | { kind: 'answered'; response: ChatResponse; usage: TokenUsage; evidence: UsageEvidence }
  | { kind: 'streamed'; usage: TokenUsage; evidence: UsageEvidence; outcome: AttemptOutcome; error: ProviderError | null; fault?: GatewayFault }
  | { kind: 'failed'; error: ProviderError; usage: TokenUsage; evidence: UsageEvidence }
  | { kind: 'fault'; fault: GatewayFault }
);

/** One line of the caller's 503: a route by its alias-level name, never a deployment, provider or URL. */
interface TriedRoute {
  route: string;
  errorClass: string;
  /** When it should take traffic again (epoch ms), if known. */
  recoversAt: number | null;
}

interface RequestContext {
  exchange: ChatExchange;
  format: ClientFormat;
  principal: Principal;
  request: ChatRequest;
  alias: ResolvedAlias;
  identity: ResponseIdentity;
  /**
   * One encoder for the whole streamed response: formats whose closing frames depend on what was
   * streamed (Anthropic's open block and stop reason) need the encoder that wrote the frames. An attempt
   * that fails before its first output has encoded nothing, so a fallback continues with it.
   */
  encoder: ClientStreamEncoder | null;
  journal: RequestJournal;
  estimatedInputTokens: number;
  admittedAt: Date;
  started: number;
  /** Aborted when the client goes away or a request-level deadline passes. */
  abort: AbortController;
  /** The pre-output deadline; cleared once a stream's first output is sent (the stream deadline then rules). */
  requestDeadline: NodeJS.Timeout | null;
  sse: SseResponse | null;
  plan: RoutePlan;
  candidateIds: string[];
  /** What each finished attempt used and cost, for RequestCompleted's totals. */
  settled: Array<{ usage: TokenUsage; cost: string }>;
}

const SESSION_ID = /^[\x20-\x7e]{1,256}$/;

/**
 * The inference pipeline (DESIGN §6): authenticate → validate → resolve the alias on one snapshot →
 * admission (concurrency permits) → eligibility and strategy → RequestAdmitted → attempts with retry
 * and fallback under one attempt budget and the request's deadlines → relay → settle → commit the
 * terminal events before the last byte → respond → release every permit on every path.
 */
export class ChatPipeline {
  private readonly logger = new Logger('ChatPipeline');
  private readonly random: () => number;

  constructor(
    private readonly deps: ChatPipelineDeps,
    private readonly settings: PipelineSettings,
  ) {
    this.random = deps.random ?? Math.random;
  }

  /**
   * Handles one chat request and writes the response. Throws a GatewayError only before anything was
   * written (the caller renders it in the client format); afterwards every outcome is written here.
   */
  async handle(exchange: ChatExchange, format: ClientFormat): Promise<void> {
    const principal = this.deps.auth.authenticate(exchange.headers, 'inference');
    const request = format.parseChat(exchange.body);
    const snapshot = this.deps.routing.current; // captured once: a reload never changes this request
    const alias = snapshot.aliases.get(request.model);
    if (!alias || !mayUseAlias(principal, alias.name) || (alias.visibility === 'private' && principal.aliases === null)) {
      throw new GatewayError(404, 'model_not_found', `The model '${request.model}' does not exist or you do not have access to it.`, 'model');
    }
    const sessionId = sessionOf(exchange.headers);

    const abort = new AbortController();
    const onGone = () => abort.abort(new ProviderError('cancelled', 'the client disconnected'));
    exchange.raw.on('close', () => !exchange.raw.writableFinished && onGone());
    const permit = await this.deps.admission.admit(principal, request.stream, abort.signal);
    let ctx: RequestContext | null = null;
    let streamDeadline: NodeJS.Timeout | null = null;
    try {
      const estimatedInputTokens = estimateInputTokens(request);
      const admittedAt = new Date();
      const plan = this.deps.planner.plan({
        alias,
        needs: requiredCapabilities(request),
        estimatedInputTokens,
        reservedOutputTokens: request.maxOutputTokens ?? 1024,
        at: admittedAt,
        stream: request.stream,
        affinity: { principal: `${principal.tenantId}/${principal.keyId}`, sessionId, requestId: exchange.requestId },
      });
      if (plan.emptiedBy) throw this.noRoute(alias, plan, request);
      const candidates = this.honouring(plan.candidates, request);
      if (candidates.length === 0) throw this.noRoute(alias, { ...plan, emptiedBy: 'capabilities' }, request);

      const journal = RequestJournal.forKey(this.deps.committer, this.settings.durability, this.settings.nodeId, exchange.requestId, principal.keyId);
      await journal.admitRequest(principal, alias, snapshot.version, exchange.headers, {
        clientFormat: format.name,
        operation: 'chat',
        stream: request.stream,
        estimatedInputTokens,
        reservedOutputTokens: request.maxOutputTokens ?? 0,
      });

      const deadlines = this.settings.resilience.deadlines;
      const identity = { id: format.responseId(exchange.requestId), created: Math.floor(admittedAt.getTime() / 1000), model: alias.name };
      ctx = {
        exchange, format, principal, request, alias, journal, estimatedInputTokens, admittedAt, abort, plan, identity,
        encoder: request.stream ? format.streamEncoder(identity, request) : null,
        started: Date.now(),
        requestDeadline: setTimeout(() => abort.abort(new DeadlineExceeded('request')), deadlines.requestTimeoutMs),
        sse: request.stream ? new SseResponse(exchange.raw, { 'x-request-id': exchange.requestId }) : null,
        candidateIds: candidates.map((c) => c.deployment.id),
        settled: [],
      };
      // The absolute stream lifetime: no heartbeat, trickle or retry extends it.
      if (request.stream) streamDeadline = setTimeout(() => abort.abort(new DeadlineExceeded('stream')), deadlines.streamTimeoutMs);
      await this.run(ctx, candidates);
    } finally {
      if (ctx?.requestDeadline) clearTimeout(ctx.requestDeadline);
      if (streamDeadline) clearTimeout(streamDeadline);
      permit.release();
    }
  }

  /**
   * The attempt loop: one request-scoped attempt budget, bounded by the request deadline. Each
   * attempt's health signal is recorded before the next target is chosen, so a failure that opens a
   * breaker also stops this request from calling that deployment again.
   */
  private async run(ctx: RequestContext, candidates: RouteCandidate[]): Promise<void> {
    const { retry } = this.settings.resilience;
    const maxAttempts = ctx.alias.policy.maxAttempts ?? retry.maxAttempts;
    const queue = [...candidates];
    const tried: TriedRoute[] = [];
    const retriesOf = new Map<string, number>();
    const deploymentsTried = new Set<string>();
    let lastError: ProviderError | null = null;
    let current: RouteCandidate | null = null;
    let step: NextStep | null = null;

    while (!ctx.abort.signal.aborted) {
      let candidate: RouteCandidate | null = null;
      let pass: HealthPass | null = null;
      let load: Permit | null = null;
      if (step?.kind === 'retry-same' && current) {
        if (!(await waitFor(step.waitMs, ctx.abort.signal))) break;
        // The provider's retry-after was just honoured, so its throttle no longer applies to this call.
        const admitted = this.admitCall(current, true);
        if ('pass' in admitted) {
          ({ pass, load } = admitted);
          candidate = current;
          retriesOf.set(current.deployment.id, (retriesOf.get(current.deployment.id) ?? 0) + 1);
        } else {
          tried.push({ route: current.route, errorClass: admitted.reason, recoversAt: admitted.until });
          step = { kind: 'fall-back', why: `${current.route} became unavailable (${admitted.reason})` };
        }
      }
      while (!candidate && queue.length > 0) {
        const next = queue.shift()!;
        const admitted = this.admitCall(next, false);
        if ('pass' in admitted) {
          ({ pass, load } = admitted);
          candidate = next;
        } else {
          tried.push({ route: next.route, errorClass: admitted.reason, recoversAt: admitted.until });
        }
      }
      if (!candidate || !pass || !load) break;

      current = candidate;
      deploymentsTried.add(candidate.deployment.id);
      const attempt = ctx.journal.attemptCount + 1;
      const why = step ? `attempt ${attempt}: ${step.why} → ${candidate.deployment.id}` : `attempt 1: first choice ${candidate.deployment.id}`;
      const started = Date.now();
      let signal: HealthSignal = 'neutral';
      let result: AttemptResult;
      try {
        result = ctx.request.stream ? await this.streamAttempt(ctx, candidate) : await this.bufferedAttempt(ctx, candidate);
        // The gateway's own failure says nothing about the deployment: its health signal stays neutral.
        if (result.kind !== 'fault') {
          const latencyMs = Date.now() - started;
          const error = result.kind === 'answered' ? null : result.error;
          const outcome: AttemptOutcome =
            result.kind === 'answered' ? 'success' : result.kind === 'streamed' ? result.outcome : error?.errorClass === 'cancelled' ? 'cancelled' : 'failed';
          signal = healthSignal(outcome, error);
          this.recordAttempt(ctx, candidate, attempt, outcome, error, result, latencyMs, why, pass.trial);
          if (outcome === 'success') this.deps.latency.observe(candidate.deployment.id, latencyMs);
          if (error?.retryAfterMs != null && (error.errorClass === 'rate_limited' || error.errorClass === 'overloaded')) {
            this.deps.health.throttle(candidate.deployment.id, error.retryAfterMs);
          }
        }
      } finally {
        load.release();
        this.deps.health.finish(pass, signal);
      }

      if (result.kind === 'fault') return this.failWithFault(ctx, candidate, result.fault);
      if (result.kind === 'answered') return this.finishBuffered(ctx, result.response, result.usage);
      if (result.kind === 'streamed') return this.finishStream(ctx, result.outcome, result.usage, result.error, result.fault ?? null);
      lastError = result.error;
      tried.push({
        route: candidate.route,
        errorClass: classOf(result.error),
        recoversAt: result.error.retryAfterMs != null ? Date.now() + result.error.retryAfterMs : null,
      });
      step = afterFailure(
        {
          errorClass: result.error.errorClass,
          retryAfterMs: result.error.retryAfterMs,
          attemptsMade: ctx.journal.attemptCount,
          maxAttempts,
          retriesOfThisDeployment: retriesOf.get(candidate.deployment.id) ?? 0,
          deploymentsTried: deploymentsTried.size,
          alternativesLeft: queue.length > 0,
          remainingMs: this.remainingMs(ctx),
        },
        retry,
        this.random,
      );
      if (step.kind === 'stop') break;
    }
    const failure = this.toClientError(ctx, lastError, tried, deploymentsTried);
    await this.complete(ctx, failure.status === 499 ? 'cancelled' : 'failed', failure.status, failure.code);
    if (ctx.sse?.clientGone || (!ctx.sse && ctx.exchange.raw.destroyed)) return;
    throw failure;
  }

  /** A breaker pass and a deployment slot for one call, or why the deployment cannot take it now. */
  private admitCall(candidate: RouteCandidate, ignoreThrottle: boolean): { pass: HealthPass; load: Permit } | Unavailable | { reason: 'saturated'; until: null } {
    const load = this.deps.deploymentLoad.tryAcquire(candidate.deployment);
    if (!load) return { reason: 'saturated', until: null };
    const pass = this.deps.health.tryPass(candidate.deployment.id, { ignoreThrottle });
    if ('reason' in pass) {
      load.release();
      return pass;
    }
    return { pass, load };
  }

  private remainingMs(ctx: RequestContext): number {
    return this.settings.resilience.deadlines.requestTimeoutMs - (Date.now() - ctx.started);
  }

  private async bufferedAttempt(ctx: RequestContext, candidate: RouteCandidate): Promise<AttemptResult> {
    const adapter = this.deps.adapters.for(candidate.deployment.provider.type)!;
    const attemptAbort = linkedAbort(ctx.abort.signal);
    try {
      const target = await this.deps.pools.target(candidate.deployment);
      const response = await adapter.chat({
        request: ctx.request,
        deployment: candidate.deployment,
        dispatcher: target.dispatcher,
        baseUrl: target.baseUrl,
        signal: attemptAbort.signal,
        // Backstops only: the request deadline (a timer on ctx.abort) fires first with its own error.
        headersTimeoutMs: Math.max(1, this.remainingMs(ctx)) + BACKSTOP_SLACK_MS,
        idleTimeoutMs: this.settings.resilience.deadlines.idleTimeoutMs + BACKSTOP_SLACK_MS,
      });
      const ids = { ttftMs: null, providerRequestId: response.providerRequestId };
      if (response.usage) return { kind: 'answered', response, usage: response.usage, evidence: 'provider', ...ids };
      const meter = new OutputMeter();
      for (const choice of response.choices) {
        meter.observe({ type: 'text', choice: choice.index, text: choice.text });
        for (const call of choice.toolCalls) meter.observe({ type: 'tool_call', choice: choice.index, index: 0, id: call.id, name: call.name, arguments: call.arguments });
      }
      return { kind: 'answered', response, ...meter.usage(ctx.estimatedInputTokens), ...ids };
    } catch (error) {
      const failure = attemptFailure(error, attemptAbort.signal);
      if (failure instanceof GatewayFault) return { kind: 'fault', fault: failure, ttftMs: null, providerRequestId: null };
      return { kind: 'failed', error: failure, usage: ZERO_USAGE, evidence: 'provider', ttftMs: null, providerRequestId: null };
    } finally {
      attemptAbort.dispose();
    }
  }

  /**
   * One streamed attempt. Before the first output: the TTFT deadline (from the attempt's start, so it
   * covers connecting and the headers too) may end it, and any failure may still fall back. After it:
   * no retry, no fallback; the idle deadline (renewed by events, not by raw bytes or heartbeats) and
   * the stream deadline end it with an error event, and a slow client meets the write-progress deadline.
   */
  private async streamAttempt(ctx: RequestContext, candidate: RouteCandidate): Promise<AttemptResult> {
    const adapter = this.deps.adapters.for(candidate.deployment.provider.type)!;
    const attemptAbort = linkedAbort(ctx.abort.signal);
    const meter = new OutputMeter();
    const sse = ctx.sse!;
    const encoder = ctx.encoder!;
    const deadlines = this.settings.resilience.deadlines;
    const ttftLimitMs = ctx.alias.policy.ttftTimeoutMs ?? deadlines.ttftTimeoutMs;
    const started = Date.now();
    let ttftMs: number | null = null;
    let upstreamId: () => string | null = () => null;
    let iterator: AsyncIterator<StreamEvent> | null = null;
    const ttft = setTimeout(() => attemptAbort.abort(new DeadlineExceeded('ttft')), ttftLimitMs);
    let idle: NodeJS.Timeout | null = null;
    try {
      const target = await this.deps.pools.target(candidate.deployment);
      const upstream = await adapter.chatStream({
        request: ctx.request,
        deployment: candidate.deployment,
        dispatcher: target.dispatcher,
        baseUrl: target.baseUrl,
        signal: attemptAbort.signal,
        headersTimeoutMs: ttftLimitMs + BACKSTOP_SLACK_MS,
        idleTimeoutMs: deadlines.idleTimeoutMs + BACKSTOP_SLACK_MS,
      });
      upstreamId = () => upstream.providerRequestId;
      iterator = upstream.events[Symbol.asyncIterator]();
      const pending: StreamEvent[] = [];
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
      clearTimeout(ttft);
      ttftMs = Date.now() - started;
      this.deps.latency.observeTtft(candidate.deployment.id, ttftMs);
      // The first output goes out now: from here on the stream deadline, not the request deadline, applies.
      if (ctx.requestDeadline) clearTimeout(ctx.requestDeadline);
      ctx.requestDeadline = null;
      sse.open(encoder.contentType);
      for (const event of pending) await this.send(ctx, encoder.encode(event));
      idle = setTimeout(() => attemptAbort.abort(new DeadlineExceeded('idle')), deadlines.idleTimeoutMs);
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        idle.refresh();
        meter.observe(next.value);
        await this.send(ctx, encoder.encode(next.value));
      }
      if (!meter.sawFinish) throw new ProviderError('malformed_response', 'the provider stream ended without a finish reason');
      const { usage, evidence } = meter.usage(ctx.estimatedInputTokens);
      return { kind: 'streamed', usage, evidence, outcome: 'success', error: null, ttftMs, providerRequestId: upstreamId() };
    } catch (error) {
      const failure = attemptFailure(error, attemptAbort.signal);
      // Closing the iterator releases the upstream body (and its connection) at once.
      void iterator?.return?.().catch(() => undefined);
      if (!attemptAbort.signal.aborted) attemptAbort.abort(failure);
      if (failure instanceof GatewayFault) {
        if (!sse.isOpen) return { kind: 'fault', fault: failure, ttftMs, providerRequestId: upstreamId() };
        const { usage, evidence } = meter.usage(ctx.estimatedInputTokens);
        return { kind: 'streamed', usage, evidence, outcome: 'failed_partial', error: null, fault: failure, ttftMs, providerRequestId: upstreamId() };
      }
      // Nothing reached the client and the provider reported no usage: nothing to bill for this attempt.
      if (!sse.isOpen) return { kind: 'failed', error: failure, usage: ZERO_USAGE, evidence: 'provider', ttftMs, providerRequestId: upstreamId() };
      const { usage, evidence } = meter.usage(ctx.estimatedInputTokens);
      const cancelled = failure.errorClass === 'cancelled' || sse.clientGone;
      return { kind: 'streamed', usage, evidence, outcome: cancelled ? 'cancelled' : 'failed_partial', error: failure, ttftMs, providerRequestId: upstreamId() };
    } finally {
      clearTimeout(ttft);
      if (idle) clearTimeout(idle);
      attemptAbort.dispose();
    }
  }

  /**
   * Writes to the client. A client that stops reading is given the write-progress deadline to drain
   * the socket; past it the stream is cut, the upstream call cancelled and the partial usage settled.
   * The timer exists only while a write is actually waiting for the socket.
   */
  private async send(ctx: RequestContext, data: string): Promise<void> {
    const written = ctx.sse!.write(data);
    if (!ctx.exchange.raw.writableNeedDrain) return written;
    const timer = setTimeout(() => {
      ctx.abort.abort(new DeadlineExceeded('write_progress'));
      ctx.exchange.raw.destroy();
    }, this.settings.resilience.deadlines.writeProgressTimeoutMs);
    try {
      await written;
    } finally {
      clearTimeout(timer);
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

  private async finishStream(ctx: RequestContext, outcome: AttemptOutcome, usage: TokenUsage, error: ProviderError | null, fault: GatewayFault | null): Promise<void> {
    const sse = ctx.sse!;
    const encoder = ctx.encoder!;
    if (outcome !== 'success') {
      if (fault?.isOurs) this.logger.error(`request ${ctx.exchange.requestId}: the gateway failed while relaying the stream: ${fault.describeCause()}`);
      const deadline = deadlineOf(error);
      const cancelled = outcome === 'cancelled';
      const code = fault ? fault.error.code : cancelled ? (deadline === 'write_progress' ? DEADLINE_CODES.write_progress : 'client_disconnected') : deadline ? DEADLINE_CODES[deadline] : 'upstream_error';
      const status = fault ? fault.error.status : deadline ? 504 : 502;
      await this.complete(ctx, cancelled ? 'cancelled' : 'failed', cancelled ? 499 : status, code).catch(
        (commitError: Error) => this.logger.error(`request ${ctx.exchange.requestId}: terminal events not committed: ${commitError.message}`),
      );
      if (!sse.clientGone) {
        const message = fault
          ? fault.error.message
          : deadline
            ? `The stream was ended: ${error!.message}.`
            : `The provider failed after the stream started: ${error ? providerErrorMessageForClient(error) : 'unknown error'}`;
        await sse.write(encoder.error(new GatewayError(status, code, message)));
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

  /**
   * The gateway failed before any output (building the upstream request, translating the answer): the
   * request ends with our error, without blaming the deployment and without another attempt. No
   * AttemptFinished is recorded: the attempt has no provider outcome to record.
   */
  private async failWithFault(ctx: RequestContext, candidate: RouteCandidate, fault: GatewayFault): Promise<void> {
    if (fault.isOurs) {
      this.logger.error(`request ${ctx.exchange.requestId}: the gateway failed during the attempt on ${candidate.deployment.id}: ${fault.describeCause()}`);
    }
    await this.complete(ctx, 'failed', fault.error.status, fault.error.code);
    if (ctx.sse?.clientGone || (!ctx.sse && ctx.exchange.raw.destroyed)) return;
    throw fault.error;
  }

  private recordAttempt(
    ctx: RequestContext, candidate: RouteCandidate, attempt: number, outcome: AttemptOutcome, error: ProviderError | null,
    result: Exclude<AttemptResult, { kind: 'fault' }>, latencyMs: number, why: string, trial: boolean,
  ): void {
    const data = attemptFinished({
      requestId: ctx.exchange.requestId, attempt, principal: ctx.principal, alias: ctx.alias, candidate, candidateIds: ctx.candidateIds,
      routingReason: `${ctx.plan.reason}; ${why}${trial ? ' (half-open trial)' : ''}`,
      outcome, error, usage: result.usage, evidence: result.evidence, latencyMs, ttftMs: result.ttftMs, providerRequestId: result.providerRequestId,
    });
    ctx.journal.recordAttempt(data);
    ctx.settled.push({ usage: data.usage, cost: data.cost.total });
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
      const adapter = this.deps.adapters.for(candidate.deployment.provider.type);
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

  /** The error for a plan that left nothing to try, named after the stage that emptied it. */
  private noRoute(alias: ResolvedAlias, plan: RoutePlan, request: ChatRequest): GatewayError {
    const skipped = plan.skipped.filter((s) => s.stage === plan.emptiedBy);
    switch (plan.emptiedBy) {
      case 'region':
        return new GatewayError(400, 'no_compliant_provider', `No route of '${alias.name}' lies within the allowed regions.`);
      case 'capabilities': {
        const lacking = skipped.find((s) => s.reason.startsWith('lacks '));
        if (lacking) {
          const missing = lacking.reason.slice('lacks '.length);
          const param = missing.includes('tools') ? 'tools' : missing.includes('vision') ? 'messages' : missing.includes('json_schema') ? 'response_format' : missing.includes('streaming') ? 'stream' : null;
          return new GatewayError(400, 'unsupported_parameter', `The model '${request.model}' cannot serve this request: its routes lack ${missing}.`, param);
        }
        if (skipped.length > 0 && skipped.every((s) => s.reason === 'context window too small')) {
          return new GatewayError(400, 'context_length_exceeded', `The request does not fit the context window of any route of '${alias.name}'.`, 'messages');
        }
        return this.unavailable(alias, skipped.map((s) => ({ route: s.route, errorClass: s.reason.replace(/ /g, '_'), recoversAt: null })));
      }
      case 'budget':
        return new GatewayError(402, 'budget_exceeded', `The estimated cost of this request exceeds the remaining budget on every route of '${alias.name}'.`);
      case 'health':
      default:
        return this.unavailable(alias, skipped.map((s) => ({ route: s.route, errorClass: s.reason, recoversAt: s.until })));
    }
  }

  private toClientError(ctx: RequestContext, error: ProviderError | null, tried: TriedRoute[], deploymentsTried: ReadonlySet<string>): GatewayError {
    const reason = ctx.abort.signal.aborted ? ctx.abort.signal.reason : null;
    if (reason instanceof ProviderError && reason.errorClass === 'cancelled' && !(reason instanceof DeadlineExceeded)) {
      return new GatewayError(499, 'client_disconnected', 'The client disconnected.');
    }
    if (reason instanceof DeadlineExceeded) {
      return new GatewayError(504, DEADLINE_CODES[reason.deadline], `The ${reason.deadline} deadline passed before a provider answered.`);
    }
    if (error && !error.fallbackable) {
      // A refusal about the request itself is the caller's 400, even when the provider said it inside a 200
      // (Gemini's promptFeedback.blockReason); auth failures are the gateway's problem, hence 502.
      const callerFault = error.errorClass === 'content_policy' || error.errorClass === 'context_length' || error.errorClass === 'invalid_request';
      const status = error.errorClass === 'auth' ? 502 : error.httpStatus && error.httpStatus < 500 ? error.httpStatus : callerFault ? 400 : 502;
      const code = error.errorClass === 'context_length' ? 'context_length_exceeded' : error.errorClass === 'content_policy' ? 'content_policy_violation' : error.errorClass === 'auth' ? 'upstream_auth_error' : 'invalid_request';
      return new GatewayError(status, code, providerErrorMessageForClient(error));
    }
    // Deployments that failed here may have just opened their breaker: that is when they recover.
    const recovery = new Map(
      ctx.plan.candidates
        .filter((c) => deploymentsTried.has(c.deployment.id))
        .map((c) => [c.route, this.deps.health.unavailable(c.deployment.id)?.until ?? null]),
    );
    const lines = tried.map((t) => ({ ...t, recoversAt: latest(t.recoversAt, recovery.get(t.route) ?? null) }));
    const healthSkipped = ctx.plan.skipped.filter((s) => s.stage === 'health').map((s) => ({ route: s.route, errorClass: s.reason, recoversAt: s.until }));
    return withProviderRequestId(this.unavailable(ctx.alias, [...lines, ...healthSkipped]), error);
  }

  /** 503 all_providers_unavailable: the routes considered and why each failed, and retry-after = the soonest recovery. */
  private unavailable(alias: ResolvedAlias, attempts: TriedRoute[]): GatewayError {
    // One line per route: its last error, and the latest time it said it recovers.
    const byRoute = new Map<string, TriedRoute>();
    for (const a of attempts) byRoute.set(a.route, { ...a, recoversAt: latest(a.recoversAt, byRoute.get(a.route)?.recoversAt ?? null) });
    const routes = [...byRoute.values()];
    const now = Date.now();
    const soonest = routes.reduce<number | null>((min, r) => (r.recoversAt !== null && r.recoversAt > now && (min === null || r.recoversAt < min) ? r.recoversAt : min), null);
    const anyNow = routes.some((r) => r.recoversAt === null || r.recoversAt <= now);
    const retryAfterS = Math.max(1, Math.ceil(((anyNow || soonest === null ? now + 1000 : soonest) - now) / 1000));
    const listed = routes.map((r) => `${r.route} (${r.errorClass})`).join(', ');
    // Every route answered that it is rate limited: that is a 429 the caller's
    // SDK knows to retry after the given time, not an outage.
    if (routes.length > 0 && routes.every((r) => r.errorClass === 'rate_limited')) {
      return new GatewayError(
        429,
        'rate_limited',
        `Every route of '${alias.name}' is rate limited by its provider: ${listed}. Retry after ${retryAfterS} s.`,
        null,
        { 'retry-after': String(retryAfterS) },
        { scope: 'provider', candidates_tried: routes.map((r) => ({ route: r.route, error_class: r.errorClass })), retry_after_s: retryAfterS },
      );
    }
    return new GatewayError(
      503,
      'all_providers_unavailable',
      listed ? `Every route of '${alias.name}' failed or is unavailable: ${listed}.` : `No route of '${alias.name}' is available right now.`,
      null,
      { 'retry-after': String(retryAfterS) },
      { candidates_tried: routes.map((r) => ({ route: r.route, error_class: r.errorClass })), retry_after_s: retryAfterS },
    );
  }
}

/** A failure's class as the caller sees it: the deadline's own code when a deadline ended it. */
function classOf(error: ProviderError): string {
  const deadline = deadlineOf(error);
  return deadline ? DEADLINE_CODES[deadline] : error.errorClass;
}

function latest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

/** The caller's `x-session-id`: untrusted, so bounded (printable ASCII, at most 256 characters). */
function sessionOf(headers: ChatExchange['headers']): string | null {
  const value = headerValue(headers['x-session-id']);
  if (value === undefined || value === '') return null;
  if (!SESSION_ID.test(value)) {
    throw new GatewayError(400, 'invalid_request', "The 'x-session-id' header must be 1 to 256 printable ASCII characters.", 'x-session-id');
  }
  return value;
}

