import { Logger } from '@nestjs/common';
import type { TokenUsage } from '../../../events/index.js';
import { type EmbeddingsRequest, type EmbeddingsResponse, estimateTokens, ProviderError, ZERO_USAGE } from '../../canonical/index.js';
import { observationOf } from '../../observability/index.js';
import { parseOpenAiEmbeddingsRequest } from '../formats/openai/openai-embeddings-request.js';
import { encodeOpenAiEmbeddings } from '../formats/openai/openai-embeddings-response.js';
import { BACKSTOP_SLACK_MS } from '../resilience/deadlines.js';
import { failedOutcome, recordAttempt, runAdmittedAttempts } from './admitted-attempts.js';
import { attemptFailure } from './attempt-failure.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import { type Exchange, admitRequest } from './request-admission.js';
import { GatewayFault } from './gateway-fault.js';
import { callTransport } from './upstream-call.js';
import { durabilityRefusal } from './durability-refusal.js';

type Answer = { response: EmbeddingsResponse; usage: TokenUsage };

/**
 * `POST /v1/embeddings`, over the same parts as chat: authenticate → validate → admit (alias, permits,
 * routes whose deployment declares `embeddings` and whose adapter can embed, RequestAdmitted) → the
 * attempt loop (deployment gate, retries and fallback) → commit → only then send the vectors.
 * Embeddings bill input tokens only.
 */
export class EmbeddingsPipeline {
  private readonly logger = new Logger('EmbeddingsPipeline');

  constructor(
    private readonly services: InferenceServices,
    private readonly settings: PipelineSettings,
  ) {}

  /** Throws a GatewayError only before anything was written (the controller renders it); writes every other outcome. */
  async handle(exchange: Exchange): Promise<void> {
    const principal = this.services.auth.authenticate(exchange.headers, 'inference');
    observationOf(exchange.raw)?.identify(principal);
    const { request, encoding } = parseOpenAiEmbeddingsRequest(exchange.body);
    const perInput = request.inputs.map((text) => Math.max(1, estimateTokens(text)));
    const estimatedInputTokens = perInput.reduce((sum, n) => sum + n, 0);
    const adapters = this.services.adapters;
    const admitted = await admitRequest(this.services, this.settings, exchange, principal, {
      operation: 'embeddings',
      clientFormat: 'openai',
      model: request.model,
      stream: false,
      needs: ['embeddings'],
      estimatedInputTokens,
      // The context window bounds each input, not the batch.
      contextInputTokens: Math.max(...perInput),
      reservedOutputTokens: 0,
      sessionId: null,
      adapterServes: (deployment, capability) => capability !== 'embeddings' || adapters.for(deployment.provider.type)?.embed !== undefined,
    });
    try {
      const idleTimeoutMs = this.settings.resilience.deadlines.idleTimeoutMs + BACKSTOP_SLACK_MS;
      const answer = await runAdmittedAttempts<Answer>(this.services, this.settings, admitted, async (turn, adapter, traceHeaders) => {
        const started = Date.now();
        // No deadline of its own (the request's covers it): the call takes the request's signal.
        const signal = admitted.lifetime.signal;
        try {
          const call = await callTransport(this.services.pools, turn.candidate.deployment, signal, {
            headersTimeoutMs: Math.max(1, admitted.lifetime.remainingMs()) + BACKSTOP_SLACK_MS,
            idleTimeoutMs,
          }, traceHeaders);
          const response = await adapter.embed!({ ...call, request });
          const problem = answerProblem(request, response);
          if (problem) throw new ProviderError('malformed_response', problem);
          const provided = response.inputTokens !== null;
          const usage: TokenUsage = { ...ZERO_USAGE, input: provided ? response.inputTokens! : estimatedInputTokens };
          const latencyMs = Date.now() - started;
          this.services.latency.observe(turn.candidate.deployment.id, latencyMs);
          recordAttempt(admitted, turn, {
            outcome: 'success', error: null, usage, evidence: provided ? 'provider' : 'estimated', latencyMs, ttftMs: null, providerRequestId: response.providerRequestId,
          });
          return { answer: { response, usage }, outcome: 'success', error: null };
        } catch (error) {
          const failure = attemptFailure(error, signal);
          if (failure instanceof GatewayFault) throw failure;
          const outcome = failedOutcome(failure);
          // A failed embeddings call produced nothing billable.
          recordAttempt(admitted, turn, { outcome, error: failure, usage: null, evidence: 'provider', latencyMs: Date.now() - started, ttftMs: null, providerRequestId: null });
          return { answer: null, outcome, error: failure };
        }
      });
      try {
        await admitted.journal.complete({ status: 'success', httpStatus: 200, errorCode: null, cacheHit: false });
      } catch (error) {
        this.logger.error(`request ${exchange.requestId}: terminal events not committed: ${(error as Error).message}`);
        throw durabilityRefusal(error, 'buffered');
      }
      if (exchange.raw.destroyed) return;
      const body = JSON.stringify(encodeOpenAiEmbeddings(answer.response.vectors, encoding, admitted.alias.name, answer.usage.input));
      exchange.raw.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'x-request-id': exchange.requestId,
      });
      exchange.raw.end(body);
    } finally {
      admitted.release();
    }
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
