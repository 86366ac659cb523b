import { ProviderError } from '../../canonical/index.js';
import type { TitanEmbeddingRequest, TitanEmbeddingResponse } from './bedrock-wire.js';

/**
 * Bedrock embeddings go through InvokeModel with the model family's own body. Switchyard speaks the
 * Amazon Titan text embeddings body (`amazon.titan-embed-text-v1`, `amazon.titan-embed-text-v2:0`):
 * one text per call, `dimensions` passed through (v2 accepts 256, 512 or 1024).
 */
export function toTitanEmbeddingRequest(input: string, dimensions: number | null): TitanEmbeddingRequest {
  return dimensions !== null ? { inputText: input, dimensions } : { inputText: input };
}

export function fromTitanEmbeddingResponse(body: unknown): { vector: number[]; inputTokens: unknown } {
  const response = body as Partial<TitanEmbeddingResponse> | null;
  if (!response || !Array.isArray(response.embedding) || !response.embedding.every((x) => typeof x === 'number')) {
    throw new ProviderError('malformed_response', 'the provider returned a body that is not a Titan embedding');
  }
  return {
    vector: response.embedding,
    // As reported: the pipeline checks the sum of every input's count.
    inputTokens: response.inputTextTokenCount ?? null,
  };
}
