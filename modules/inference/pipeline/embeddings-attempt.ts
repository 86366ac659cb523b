import { type EmbeddingsRequest, type EmbeddingsResponse, ProviderError, ZERO_USAGE } from '../../canonical/index.js';
import type { ProviderAdapter } from '../../providers/index.js';
import { type BufferedResult, type TransportOpener, bufferedCall } from './buffered-attempt.js';

/**
 * One embeddings call. Embeddings bill input tokens only: the provider's count when it gives one,
 * otherwise the admission estimate (evidence `estimated`). An answer the client could not use is the
 * provider's failure (malformed_response), so the request may fall back instead of passing it on.
 */
export async function embeddingsAttempt(
  adapter: ProviderAdapter,
  request: EmbeddingsRequest,
  estimatedInputTokens: number,
  requestSignal: AbortSignal,
  transport: TransportOpener,
): Promise<BufferedResult<EmbeddingsResponse>> {
  return bufferedCall(requestSignal, async (signal) => {
    // Admission only routes to deployments whose adapter can embed.
    const response = await adapter.embed!({ request, ...(await transport(signal)) });
    const problem = answerProblem(request, response);
    if (problem) throw new ProviderError('malformed_response', problem);
    const provided = response.inputTokens !== null;
    return {
      response,
      // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
      usage: { ...ZERO_USAGE, input: provided ? response.inputTokens! : estimatedInputTokens },
      evidence: provided ? 'provider' : 'estimated',
      providerRequestId: response.providerRequestId,
    };
  });
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
