import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { bedrockMockFormat } from './bedrock-mock-format.js';
import { MockBadRequest } from './mock-format.js';
import { openAiMockFormat } from './openai-mock-format.js';
import { mockTokens } from './mock-script.js';

/** What the mock needs to know of an embeddings request, whatever dialect it arrived in. */
export interface MockEmbeddingsInput {
  model: string;
  inputs: string[];
  dimensions: number;
}

/** One embeddings dialect the mock speaks; the server adds timing, faults and the request log. */
export interface MockEmbeddingsFormat {
  readonly name: string;
  matches(method: string, path: string): boolean;
  authProblem?(headers: IncomingHttpHeaders, path: string): { status: number; message: string } | null;
  /** Throws MockBadRequest when the body (or the query string) is not a valid request of this dialect. */
  parse(body: unknown, path: string, query: URLSearchParams): MockEmbeddingsInput;
  render(input: MockEmbeddingsInput, vectors: number[][], tokens: number[]): unknown;
  errorBody(status: number, message: string): unknown;
  errorHeaders?(status: number): Record<string, string>;
}

/**
 * A deterministic unit vector for a text: the same text always gets the same vector, different texts
 * get different ones, and every component is a float32 value, so floats and base64 agree exactly.
 */
export function mockEmbedding(text: string, dimensions: number): number[] {
  let seed = createHash('sha256').update(text).digest().readUInt32LE(0);
  const raw = Array.from({ length: dimensions }, () => {
    // mulberry32: small, fast and deterministic
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  });
  const norm = Math.sqrt(raw.reduce((sum, x) => sum + x * x, 0)) || 1;
  return raw.map((x) => Math.fround(x / norm));
}

export function mockEmbeddingTokens(text: string): number {
  return Math.max(1, mockTokens(text));
}

const AZURE_EMBEDDINGS = /\/openai\/deployments\/([^/]+)\/embeddings$/;

/**
 * OpenAI `POST …/embeddings` (also what openai-compatible servers and the built-in mock provider serve),
 * and Azure OpenAI's `/openai/deployments/{name}/embeddings?api-version=…`, whose URL names the model
 * and whose body does not.
 */
export const openAiEmbeddingsMockFormat: MockEmbeddingsFormat = {
  name: 'openai-embeddings',
  matches: (method, path) => method === 'POST' && /\/embeddings$/.test(path),
  authProblem: (headers, path) => openAiMockFormat.authProblem!(headers, path.replace(/\/embeddings$/, '/chat/completions')),
  parse(body, path, query) {
    const request = body as Record<string, unknown>;
    if (!request || typeof request !== 'object') throw new MockBadRequest('the body must be a JSON object');
    const azure = AZURE_EMBEDDINGS.exec(path);
    if (azure && !query.get('api-version')) throw new MockBadRequest('Missing required query parameter: api-version');
    const model = azure ? decodeURIComponent(azure[1]) : request.model;
    if (typeof model !== 'string' || !model) throw new MockBadRequest("'model' is required");
    const input = request.input;
    const inputs = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((x) => typeof x === 'string') ? (input as string[]) : null;
    if (!inputs || inputs.length === 0 || inputs.some((x) => x.length === 0)) throw new MockBadRequest("'input' must be a non-empty string or array of non-empty strings");
    if (request.encoding_format !== undefined && request.encoding_format !== 'float') throw new MockBadRequest('the mock answers encoding_format float only');
    const dimensions = request.dimensions ?? 1536;
    if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > 3072) throw new MockBadRequest("'dimensions' must be an integer from 1 to 3072");
    return { model, inputs, dimensions };
  },
  render(input, vectors, tokens) {
    const promptTokens = tokens.reduce((sum, n) => sum + n, 0);
    return {
      object: 'list',
      data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
      model: input.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    };
  },
  errorBody: (status, message) => ({
    error: { message, type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null },
  }),
};

const INVOKE_PATH = /\/model\/([^/]+)\/invoke$/;

/** Bedrock InvokeModel with the Amazon Titan text embeddings body (`{inputText, dimensions?}`), SigV4 required. */
export const titanEmbeddingsMockFormat: MockEmbeddingsFormat = {
  name: 'bedrock-titan-embeddings',
  matches: (method, path) => method === 'POST' && INVOKE_PATH.test(path),
  authProblem: (headers, path) => bedrockMockFormat.authProblem!(headers, path),
  parse(body, path) {
    const request = body as Record<string, unknown>;
    if (!request || typeof request.inputText !== 'string' || request.inputText.length === 0) throw new MockBadRequest('inputText is required');
    const dimensions = request.dimensions ?? 1024;
    if (![256, 512, 1024].includes(dimensions as number)) throw new MockBadRequest('dimensions must be one of 256, 512, 1024');
    return { model: decodeURIComponent(INVOKE_PATH.exec(path)![1]), inputs: [request.inputText], dimensions: dimensions as number };
  },
  render: (_input, vectors, tokens) => ({ embedding: vectors[0], embeddingsByType: { float: vectors[0] }, inputTextTokenCount: tokens[0] }),
  errorBody: (status, message) => bedrockMockFormat.errorBody(status, message),
  errorHeaders: (status) => bedrockMockFormat.errorHeaders!(status),
};

export const MOCK_EMBEDDINGS_FORMATS: MockEmbeddingsFormat[] = [openAiEmbeddingsMockFormat, titanEmbeddingsMockFormat];

