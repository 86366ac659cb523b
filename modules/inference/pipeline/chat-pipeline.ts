import { Logger } from '@nestjs/common';
import type { TokenUsage } from '../../../events/index.js';
import {
  type ChatRequest, type ChatResponse, checkDocumentLimits, DEFAULT_DOCUMENT_LIMITS, GatewayError, requiredCapabilities, type StreamEvent,
} from '../../canonical/index.js';
import { requestedDocumentValue } from '../../providers/index.js';
import { MAX_LOGGED_CONTENT, observationOf } from '../../observability/index.js';
import type { ClientFormat } from '../formats/client-format.js';
import { BACKSTOP_SLACK_MS } from '../resilience/deadlines.js';
import { cappedForDeployment, chatReservation } from './admission-estimate.js';
import { failedOutcome, recordAttempt, runAdmittedAttempts } from './admitted-attempts.js';
import { bufferedAttempt, bufferedChatAttempt } from './buffered-attempt.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import { type CachedRequest, type Exchange, type RoutedRequest, admitRequest } from './request-admission.js';
import { anthropicBetasOf, sessionIdOf } from './request-headers.js';
import { type StreamAttemptResult, StreamRelay, streamFailure } from './stream-relay.js';
import { callTransport } from './upstream-call.js';
import type { StoredAnswer } from '../../cache/index.js';
import type { Principal } from '../../../projections/key-index/index.js';
import { AnswerCapture } from './answer-capture.js';
import { type CacheDecision, type ExactCacheLookup, withCacheStatus } from './exact-cache-lookup.js';
import type { IdempotentReplay, IdempotentTurn } from './idempotent-replay.js';
import { replyWithStoredAnswer } from './stored-answer-reply.js';
import { durabilityRefusal } from './durability-refusal.js';
import { chatUsageBound } from './usage-bound.js';
import { chatAnswerBytes } from './answer-size.js';
import { ContentPolicyViolation, RemoteCheckUnavailable, UnresolvedPlaceholders } from '../../content-safety/index.js';
import { contentPolicyError, guardrailUnavailableError, unresolvedPlaceholdersError } from './content-policy-refusal.js';
import { GuardedStreamEncoder } from './guarded-stream-encoder.js';
import { noteUnsentParameters } from './unsent-parameters-header.js';

/** A stream reads no buffered answer (error bodies aside, which are bounded on their own): its bound is per event and its lifetime. */
const NOT_BUFFERED = 0;

/** The parameter each client format caps output with (what a budget refusal tells the client to send). */
const OUTPUT_CAP_PARAMETER: Readonly<Record<ClientFormat['name'], string>> = Object.freeze({ openai: 'max_tokens', anthropic: 'max_tokens', responses: 'max_output_tokens' });

type StreamedAnswer = Extract<StreamAttemptResult, { reachedClient: true }>;

/** A request as its client sent it (what answers are encoded for) and as providers are sent it (after its content policy). */
interface ChatRequests {
  client: ChatRequest;
  sent: ChatRequest;
}

/** The parts that answer from stored outcomes before dispatch: idempotent replay and the exact cache. */
export interface StoredAnswerParts {
  idempotency: IdempotentReplay;
  cache: ExactCacheLookup;
  /** The largest answer kept for either (characters of a streamed answer as it is captured). */
  maxEntryBytes: number;
}

/** What a request does with its complete answer before the last byte: the cache entry, the idempotent outcome. */
interface AnswerKeeping {
  cache: CacheDecision;
  idempotency: IdempotentTurn | null;
}

/**
 * Chat, for every client format (OpenAI Chat Completions, Anthropic Messages, OpenAI Responses):
 * authenticate → validate → idempotent replay → admit (alias, permits and rate limits, the exact cache,
 * plan and budget, RequestAdmitted) → a cache hit's stored answer, or attempts (buffered or through the
 * stream relay) → settle in the journal and commit before the last byte (and keep the answer for the
 * cache and the idempotency key) → respond. Every permit, timer and idempotency hold is released on
 * every path.
 */
export class ChatPipeline {
  private readonly logger = new Logger('ChatPipeline');

  constructor(
    private readonly services: InferenceServices,
    private readonly settings: PipelineSettings,
    private readonly stored: StoredAnswerParts,
  ) {}

  /**
   * Handles one chat request and writes the response. Throws a GatewayError only before anything was
   * written (the caller renders it in the client format); afterwards every outcome is written here.
   */
  async handle(exchange: Exchange, format: ClientFormat): Promise<void> {
    const principal = this.services.auth.authenticate(exchange.headers, 'inference');
    const observation = observationOf(exchange.raw);
    observation?.identify(principal);
    const request = format.parseChat(exchange.body);
    // Before the idempotency key and admission: an oversized document reserves nothing and reaches no provider.
    checkDocumentLimits(request, this.settings.documents ?? DEFAULT_DOCUMENT_LIMITS);
    // A header, not a body field, in every client format: the OpenAI SDK sends it through defaultHeaders.
    const betas = anthropicBetasOf(exchange.headers);
    if (betas !== null) request.anthropicBetas = betas;
    if (observation?.logsContent) observation.recordContent('prompt', () => promptText(request));
    const idempotency = await this.stored.idempotency.enter(exchange, principal, format, request);
    if (idempotency === 'replayed') return;
    try {
      await this.admitted(exchange, format, request, principal, idempotency);
    } finally {
      idempotency?.release();
    }
  }

  private async admitted(exchange: Exchange, format: ClientFormat, request: ChatRequest, principal: Principal, idempotency: IdempotentTurn | null): Promise<void> {
    const reservation = chatReservation(request);
    const adapters = this.services.adapters;
    // What providers are sent: the request itself, or what its content policy made of it (masked, tokenized).
    let sent = request;
    const admitted = await admitRequest(this.services, this.settings, exchange, principal, {
      operation: 'chat',
      clientFormat: format.name,
      model: request.model,
      stream: request.stream,
      needs: requiredCapabilities(request),
      estimatedInputTokens: reservation.inputTokens,
      contextInputTokens: reservation.inputTokens,
      reservedOutputTokens: reservation.outputTokens,
      outputTokensPerChoice: reservation.outputTokensPerChoice,
      outputCap: { parameter: OUTPUT_CAP_PARAMETER[format.name], sent: request.maxOutputTokens != null },
      sessionId: sessionIdOf(exchange.headers),
      honours: (deployment) => {
        const parameter = adapters.for(deployment.provider.type)?.unsupportedParameter(request, deployment) ?? null;
        return parameter !== null && format.parameterName ? format.parameterName(parameter) : parameter;
      },
      unsent: (deployment) => adapters.for(deployment.provider.type)?.unsentParameters(request, deployment) ?? [],
      parameterName: format.parameterName,
      requestedValue: (parameter) => (parameter === 'anthropic-beta' ? request.anthropicBetas?.join(',') ?? null : requestedDocumentValue(request, parameter)),
      adapterServes: (deployment) => adapters.for(deployment.provider.type) !== undefined,
      inspectContent: async (guard) => {
        sent = await guard.inspectRequest(request);
        // An opted-in tenant's content log shows what left the gateway, never what the policy removed.
        const observation = observationOf(exchange.raw);
        if (sent !== request && observation?.logsContent) observation.recordContent('prompt', () => promptText(sent));
      },
    }, (alias, contentPolicy) => this.stored.cache.decide(principal.tenantId, alias, request, exchange.headers, contentPolicy));
    try {
      try {
        if (admitted.answeredBy === 'cache') await this.fromCache(exchange, format, request, admitted, idempotency);
        else if (request.stream) await this.stream(exchange, format, { client: request, sent }, admitted, reservation.inputTokens, { cache: admitted.cache, idempotency });
        else await this.buffered(exchange, format, { client: request, sent }, admitted, reservation.inputTokens, { cache: admitted.cache, idempotency });
      } catch (error) {
        throw error instanceof GatewayError ? withCacheStatus(error, admitted.cache.status) : error;
      }
    } finally {
      admitted.release();
    }
  }

  /**
   * Answers from the exact cache: no provider call. The request's events say so (RequestServedFromCache,
   * zero cost, the saving) and are committed before the first byte; the answer is then written whole.
   */
  private async fromCache(exchange: Exchange, format: ClientFormat, request: ChatRequest, admitted: CachedRequest, idempotency: IdempotentTurn | null): Promise<void> {
    const hit = admitted.cache.answer;
    admitted.journal.recordCacheHit({
      requestId: exchange.requestId,
      tenantId: admitted.principal.tenantId,
      keyId: admitted.principal.keyId,
      alias: admitted.alias.name,
      aliasVersion: admitted.alias.version,
      sourceRequestId: hit.requestId,
      deploymentId: hit.source.deploymentId,
      providerId: hit.source.providerId,
      model: hit.source.model,
      priceVersion: hit.source.priceVersion,
      usage: hit.usage,
      savedCostUsd: hit.source.costUsd,
    });
    try {
      await admitted.journal.complete({ status: 'success', httpStatus: 200, errorCode: null, cacheHit: true });
    } catch (error) {
      this.logger.error(`request ${exchange.requestId}: terminal events not committed: ${(error as Error).message}`);
      throw durabilityRefusal(error, 'buffered');
    }
    const created = Math.floor(Date.now() / 1000);
    // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
    await idempotency?.settle({ ...hit, requestId: exchange.requestId, created });
    const identity = { id: format.responseId(exchange.requestId), created, model: admitted.alias.name };
    await replyWithStoredAnswer(exchange.raw, format, request, hit, identity, { 'x-request-id': exchange.requestId, 'x-switchyard-cache': 'hit' });
  }

  /** Keeps a complete provider answer for the exact cache and the idempotency key; never throws. */
  private async keep(keeping: AnswerKeeping, admitted: RoutedRequest, response: ChatResponse, usage: TokenUsage, created: number): Promise<void> {
    // Only a cache miss is remembered; without it and without an idempotency key nothing keeps the answer.
    if (keeping.cache.status !== 'miss' && !keeping.idempotency) return;
    const attempt = admitted.journal.lastAttempt;
    if (!attempt || attempt.outcome !== 'success') return;
    const answer: StoredAnswer = {
      requestId: admitted.requestId,
      created,
      // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
      response: { ...response, usage: null },
      usage,
      source: { deploymentId: attempt.deploymentId, providerId: attempt.providerId, model: attempt.model, priceVersion: attempt.priceVersion, costUsd: attempt.cost.total },
    };
    await Promise.all([this.stored.cache.remember(keeping.cache, answer), keeping.idempotency?.settle(answer)]);
  }

  private async buffered(exchange: Exchange, format: ClientFormat, requests: ChatRequests, admitted: RoutedRequest, estimatedInputTokens: number, keeping: AnswerKeeping): Promise<void> {
    const request = requests.client;
    const answer = await runAdmittedAttempts(this.services, this.settings, admitted, bufferedAttempt(this.services, this.settings, admitted, (adapter, transport, deployment) => {
      noteUnsentParameters(exchange.raw, format, admitted.unsent(deployment));
      return bufferedChatAttempt(adapter, requests.sent, estimatedInputTokens, deployment, chatAnswerBytes(request, deployment, this.settings.resilience.maxAnswerBytes), admitted.lifetime.signal, transport);
    }));
    const guard = admitted.contentGuard;
    if (guard) {
      // Output checks and placeholder recovery, on the whole answer, before a byte of it is sent.
      let refusal: GatewayError | null = null;
      try {
        answer.response = guard.inspectAnswer(answer.response);
        await guard.checkAnswerRemotely();
      } catch (error) {
        if (error instanceof ContentPolicyViolation) refusal = contentPolicyError(error);
        else if (error instanceof RemoteCheckUnavailable) refusal = guardrailUnavailableError(error);
        else if (error instanceof UnresolvedPlaceholders) refusal = unresolvedPlaceholdersError(error.count);
        else throw error;
      }
      admitted.observation?.contentFindings(guard.policyLabel, guard.outputCounts.lines());
      if (refusal) {
        // The provider answered and is billed; the client gets the refusal instead of the answer.
        await admitted.journal.complete({ status: 'failed', httpStatus: refusal.status, errorCode: refusal.code, cacheHit: false, contentPolicy: guard.completed() })
          .catch((error: Error) => this.logger.error(`request ${exchange.requestId}: terminal events not committed: ${error.message}`));
        throw refusal;
      }
    }
    try {
      await admitted.journal.complete({ status: 'success', httpStatus: 200, errorCode: null, cacheHit: false, ...(guard ? { contentPolicy: guard.completed() } : {}) });
    } catch (error) {
      this.logger.error(`request ${exchange.requestId}: terminal events not committed: ${(error as Error).message}`);
      throw durabilityRefusal(error, 'buffered');
    }
    if (admitted.observation?.logsContent) admitted.observation.recordContent('completion', () => answer.response.choices.map((c) => c.text).join('\n'));
    const identity = { id: format.responseId(exchange.requestId), created: Math.floor(Date.now() / 1000), model: admitted.alias.name };
    await this.keep(keeping, admitted, answer.response, answer.usage, identity.created);
    if (exchange.raw.destroyed) return;
    const body = JSON.stringify(format.encodeChat(answer.response, identity, answer.usage, request));
    exchange.raw.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'x-request-id': exchange.requestId,
      'x-switchyard-cache': keeping.cache.status,
    });
    exchange.raw.end(body);
  }

  private async stream(
    exchange: Exchange, format: ClientFormat, requests: ChatRequests, admitted: RoutedRequest, estimatedInputTokens: number, keeping: AnswerKeeping,
  ): Promise<void> {
    const request = requests.client;
    const guard = admitted.contentGuard;
    const deadlines = this.settings.resilience.deadlines;
    const observation = admitted.observation;
    // An opted-in tenant's streamed completion, kept (bounded) for its log line.
    const completion = observation?.logsContent ? new StreamedText() : null;
    const identity = { id: format.responseId(exchange.requestId), created: Math.floor(Date.now() / 1000), model: admitted.alias.name };
    // Only a stream whose answer will be kept pays for keeping its text (bounded by the entry size).
    const encoder = format.streamEncoder(identity, request, estimatedInputTokens);
    const capture = keeping.cache.status === 'miss' || keeping.idempotency ? new AnswerCapture(encoder, this.stored.maxEntryBytes) : null;
    const onRelayed = completion ? (event: StreamEvent) => completion.add(event) : undefined;
    // The content policy's output checks and recovery sit outermost: the capture and the log see what the client sees.
    const outer = guard ? new GuardedStreamEncoder(capture ?? encoder, guard, onRelayed) : capture ?? encoder;
    const relay = new StreamRelay({
      raw: exchange.raw,
      requestId: exchange.requestId,
      encoder: outer,
      deadlines,
      requestAbort: admitted.lifetime.abort,
      onFirstOutput: () => admitted.lifetime.endRequestDeadline(),
      headers: { 'x-switchyard-cache': keeping.cache.status },
      onRelayed: guard ? undefined : onRelayed,
    });
    try {
      const ttftLimitMs = admitted.alias.policy.ttftTimeoutMs ?? deadlines.ttftTimeoutMs;
      const timeouts = { headersTimeoutMs: ttftLimitMs + BACKSTOP_SLACK_MS, idleTimeoutMs: deadlines.idleTimeoutMs + BACKSTOP_SLACK_MS };
      const answer = await runAdmittedAttempts<StreamedAnswer>(this.services, this.settings, admitted, async (turn, adapter, traceHeaders) => {
        const started = Date.now();
        const deployment = turn.candidate.deployment;
        noteUnsentParameters(exchange.raw, format, admitted.unsent(deployment));
        const result = await relay.attempt(
          async (signal) => adapter.chatStream({ request: cappedForDeployment(requests.sent, deployment), maxAnswerBytes: NOT_BUFFERED, ...(await callTransport(this.services.pools, deployment, signal, timeouts, traceHeaders)) }),
          ttftLimitMs,
          { estimatedInputTokens, bound: chatUsageBound(request, deployment, estimatedInputTokens) },
          (ttftMs) => this.services.latency.observeTtft(deployment.id, ttftMs),
        );
        const latencyMs = Date.now() - started;
        const ids = { latencyMs, ttftMs: result.ttftMs, providerRequestId: result.providerRequestId };
        if (!result.reachedClient) {
          const outcome = failedOutcome(result.error);
          recordAttempt(admitted, turn, { outcome, error: result.error, usage: null, evidence: 'provider', ...ids });
          return { answer: null, outcome, error: result.error };
        }
        if (result.outcome === 'success') this.services.latency.observe(deployment.id, latencyMs);
        recordAttempt(admitted, turn, { outcome: result.outcome, error: result.error, usage: result.usage, evidence: result.evidence, implausible: result.implausible, ...ids });
        return { answer: result, outcome: result.outcome, error: result.error };
      });
      const ending = answer.outcome === 'success' ? { status: 'success' as const, httpStatus: 200, errorCode: null } : streamEnding(answer);
      if (answer.fault?.isOurs) this.logger.error(`request ${exchange.requestId}: the gateway failed while relaying the stream: ${answer.fault.describeCause()}`);
      await relay.finish(
        answer,
        async () => {
          const manifest = guard ? { contentPolicy: guard.completed() } : {};
          if (guard) admitted.observation?.contentFindings(guard.policyLabel, guard.outputCounts.lines());
          await admitted.journal.complete({ status: ending.status, httpStatus: ending.httpStatus, errorCode: ending.errorCode, cacheHit: false, ...manifest });
          // Committed: keep a complete answer before its end marker goes out, so an immediate repeat finds it.
          const response = capture && answer.outcome === 'success' && !relay.clientGone ? capture.response(answer.providerRequestId) : null;
          if (response) await this.keep(keeping, admitted, response, answer.usage, identity.created);
        },
        (error) => this.logger.error(`request ${exchange.requestId}: terminal events not committed: ${error.message}`),
      );
      if (completion) observation!.recordContent('completion', () => completion.text());
    } finally {
      relay.dispose();
    }
  }
}


function streamEnding(answer: StreamedAnswer): { status: 'failed' | 'cancelled'; httpStatus: number; errorCode: string } {
  const { status, code } = streamFailure(answer);
  return { status: answer.outcome === 'cancelled' ? 'cancelled' : 'failed', httpStatus: status, errorCode: code };
}

/** The text of a request's messages, for an opted-in tenant's content log (redacted there). */
function promptText(request: ChatRequest): string {
  return request.messages
    .map((message) => `${message.role}: ${message.content.map((part) => (part.type === 'text' ? part.text : part.type === 'document' ? '[document]' : '[image]')).join(' ')}`)
    .join('\n');
}

/** The text of a streamed answer, for a content log line: at most MAX_LOGGED_CONTENT characters are kept. */
class StreamedText {
  private readonly parts: string[] = [];
  private length = 0;

  add(event: StreamEvent): void {
    if (event.type !== 'text' || this.length >= MAX_LOGGED_CONTENT) return;
    this.parts.push(event.text);
    this.length += event.text.length;
  }

  text(): string {
    return this.parts.join('');
  }
}
