import { type EmbeddingsRequest, type EmbeddingsResponse, ProviderError, reportedField } from '../../canonical/index.js';

/** The OpenAI embeddings answer (the subset Switchyard reads and the mock writes). */
export interface OpenAiEmbeddingList {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** Canonical embeddings request → OpenAI `/embeddings` body. Floats upstream; the client format encodes. */
export function toOpenAiEmbeddingsRequest(request: EmbeddingsRequest, model: string | null): Record<string, unknown> {
  const body: Record<string, unknown> = model ? { model, input: request.inputs, encoding_format: 'float' } : { input: request.inputs, encoding_format: 'float' };
  if (request.dimensions !== null) body.dimensions = request.dimensions;
  if (request.user !== null) body.user = request.user;
  return body;
}

/** OpenAI embedding list → canonical; vectors are put back in input order by their `index`. */
export function fromOpenAiEmbeddings(body: unknown, expected: number): EmbeddingsResponse {
  const list = body as Partial<OpenAiEmbeddingList> | null;
  if (!list || !Array.isArray(list.data)) throw new ProviderError('malformed_response', 'the provider returned a body that is not an embedding list');
  const vectors: number[][] = new Array(expected);
  for (const [position, item] of list.data.entries()) {
    const index = typeof item?.index === 'number' ? item.index : position;
    if (!Array.isArray(item?.embedding) || index < 0 || index >= expected || vectors[index]) {
      throw new ProviderError('malformed_response', 'the provider returned an embedding list that does not match the inputs');
    }
    vectors[index] = item.embedding;
  }
  if (list.data.length !== expected) throw new ProviderError('malformed_response', 'the provider returned fewer embeddings than inputs');
  return {
    providerRequestId: null,
    vectors,
    // As reported (the pipeline checks it); absent is "not said", anything else is the provider's claim.
    inputTokens: list.usage?.prompt_tokens !== undefined && list.usage?.prompt_tokens !== null ? [reportedField('usage.prompt_tokens', list.usage.prompt_tokens, true)] : null,
  };
}
