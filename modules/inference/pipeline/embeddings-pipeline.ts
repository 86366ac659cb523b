import { Logger } from '@nestjs/common';
import { estimateTokens } from '../../canonical/index.js';
import { observationOf } from '../../observability/index.js';
import { parseOpenAiEmbeddingsRequest } from '../formats/openai/openai-embeddings-request.js';
import { encodeOpenAiEmbeddings } from '../formats/openai/openai-embeddings-response.js';
import { runAdmittedAttempts } from './admitted-attempts.js';
import { bufferedAttempt } from './buffered-attempt.js';
import { embeddingsAttempt } from './embeddings-attempt.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import { type Exchange, admitRequest } from './request-admission.js';
import { durabilityRefusal } from './durability-refusal.js';
import { embeddingsAnswerBytes } from './answer-size.js';

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
    // What the provider is sent: the inputs, or what the content policy in force made of them (masked).
    let sent = request;
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
      inspectContent: async (guard) => {
        const inputs = guard.inspectTexts(request.inputs);
        await guard.checkRemotely('input', inputs);
        // eslint-disable-next-line no-restricted-syntax -- a copy with its inputs replaced, only under a policy that changed them
        if (inputs !== request.inputs) sent = { ...request, inputs };
      },
    });
    const answerBytes = embeddingsAnswerBytes(request, this.settings.resilience.maxAnswerBytes);
    try {
      const answer = await runAdmittedAttempts(this.services, this.settings, admitted, bufferedAttempt(this.services, this.settings, admitted, (adapter, transport, deployment) =>
        embeddingsAttempt(adapter, sent, estimatedInputTokens, deployment, answerBytes, admitted.lifetime.signal, transport),
      ));
      try {
        await admitted.journal.complete({ status: 'success', httpStatus: 200, errorCode: null, cacheHit: false, ...(admitted.contentGuard ? { contentPolicy: admitted.contentGuard.completed() } : {}) });
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
