import type { EmbeddingEncoding } from './openai-embeddings-request.js';

/**
 * Canonical vectors → OpenAI embedding list, named by the alias. `base64` is what the official SDKs ask
 * for by default: the little-endian float32 bytes of each vector, base64-encoded.
 */
export function encodeOpenAiEmbeddings(vectors: number[][], encoding: EmbeddingEncoding, alias: string, inputTokens: number): unknown {
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encoding === 'base64' ? toBase64(vector) : vector })),
    model: alias,
    usage: { prompt_tokens: inputTokens, total_tokens: inputTokens },
  };
}

function toBase64(vector: number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes.toString('base64');
}
