import { type EmbeddingsRequest, type EmbeddingsResponse, ProviderError, ZERO_USAGE, checkReportedUsage } from '../../canonical/index.js';
import type { ProviderAdapter } from '../../providers/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import { type BufferedResult, type TransportOpener, bufferedCall } from './buffered-attempt.js';
import { embeddingsUsageBound } from './usage-bound.js';

/**
 * One embeddings call on `deployment`. Embeddings bill input tokens only: the provider's count when it
 * gives one that can be believed (checkReportedUsage against the request's bound), otherwise the
 * admission estimate (evidence `estimated`, or `implausible` when the provider's count was replaced).
 * An answer the client could not use is the provider's failure (malformed_response), so the request
 * may fall back instead of passing it on.
 */
export async function embeddingsAttempt(
  adapter: ProviderAdapter,
  request: EmbeddingsRequest,
  estimatedInputTokens: number,
  deployment: ResolvedDeployment,
  maxAnswerBytes: number,
  requestSignal: AbortSignal,
  transport: TransportOpener,
): Promise<BufferedResult<EmbeddingsResponse>> {
  return bufferedCall(requestSignal, async (signal) => {
    // Admission only routes to deployments whose adapter can embed.
    const response = await adapter.embed!({ request, maxAnswerBytes, ...(await transport(signal)) });
    const problem = answerProblem(request, response);
    if (problem) throw new ProviderError('malformed_response', problem);
    if (response.inputTokens === null) {
      // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
      return { response, usage: { ...ZERO_USAGE, input: estimatedInputTokens }, evidence: 'estimated', implausible: null, providerRequestId: response.providerRequestId };
    }
    const bound = embeddingsUsageBound(request, deployment, estimatedInputTokens);
    const checked = checkReportedUsage({ input: response.inputTokens, cachedInput: [], cacheWrite: [], output: [], reasoning: [] }, bound, { input: estimatedInputTokens, output: 0 });
    return {
      response, usage: checked.usage, evidence: checked.implausible ? 'implausible' : 'provider', implausible: checked.implausible, providerRequestId: response.providerRequestId,
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
