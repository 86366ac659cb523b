import type { IncomingHttpHeaders } from 'node:http';
import { anthropicMockFormat } from './anthropic-mock-format.js';
import { bedrockMockFormat } from './bedrock-mock-format.js';
import { MockBadRequest } from './mock-format.js';
import { type MockInput, mockTokens } from './mock-script.js';

/** One provider's token-count endpoint as the mock serves it; the server adds faults and the request log. */
export interface MockTokenCountFormat {
  readonly name: string;
  matches(method: string, path: string): boolean;
  authProblem?(headers: IncomingHttpHeaders, path: string): { status: number; message: string } | null;
  /** Throws MockBadRequest when the body is not a valid count request of this dialect. */
  parse(body: unknown, path: string): MockInput;
  render(inputTokens: number): unknown;
  errorBody(status: number, message: string): unknown;
  errorHeaders?(status: number): Record<string, string>;
}

/** What the mock counts for a prompt: the same number its answers report as prompt tokens. */
export function mockPromptTokens(input: MockInput): number {
  return mockTokens(input.promptText) + 3;
}

const COUNT_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers']);

/**
 * Anthropic `POST /v1/messages/count_tokens`: a Messages body without `max_tokens` (and without
 * sampling settings, which Anthropic refuses there) → `{input_tokens}`.
 */
export const anthropicTokenCountMockFormat: MockTokenCountFormat = {
  name: 'anthropic-count-tokens',
  matches: (method, path) => method === 'POST' && /\/v1\/messages\/count_tokens$/.test(path),
  authProblem: (headers, path) => anthropicMockFormat.authProblem!(headers, path),
  parse(body, path) {
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new MockBadRequest('the body must be a JSON object');
    for (const key of Object.keys(body)) if (!COUNT_FIELDS.has(key)) throw new MockBadRequest(`${key}: Extra inputs are not permitted`);
    return anthropicMockFormat.parse({ ...body, max_tokens: 1 }, path, new URLSearchParams());
  },
  render: (inputTokens) => ({ input_tokens: inputTokens }),
  errorBody: (status, message) => anthropicMockFormat.errorBody(status, message),
};

const BEDROCK_COUNT_PATH = /\/model\/([^/]+)\/count-tokens$/;

/**
 * Bedrock CountTokens, `POST /model/{modelId}/count-tokens` with `{input: {converse: {messages,
 * system, toolConfig}}}` → `{inputTokens}`, SigV4-signed like every Bedrock call.
 */
export const bedrockTokenCountMockFormat: MockTokenCountFormat = {
  name: 'bedrock-count-tokens',
  matches: (method, path) => method === 'POST' && BEDROCK_COUNT_PATH.test(path),
  authProblem: (headers, path) => bedrockMockFormat.authProblem!(headers, path),
  parse(body, path) {
    const input = (body as { input?: { converse?: unknown } } | null)?.input;
    if (!input || typeof input !== 'object' || !input.converse || typeof input.converse !== 'object') {
      throw new MockBadRequest('input.converse is required (the Converse request to count).');
    }
    const [, model] = BEDROCK_COUNT_PATH.exec(path)!;
    return bedrockMockFormat.parse(input.converse, `/model/${model}/converse`, new URLSearchParams());
  },
  render: (inputTokens) => ({ inputTokens }),
  errorBody: (status, message) => bedrockMockFormat.errorBody(status, message),
  errorHeaders: (status) => bedrockMockFormat.errorHeaders?.(status) ?? {},
};

export const MOCK_TOKEN_COUNT_FORMATS: MockTokenCountFormat[] = [anthropicTokenCountMockFormat, bedrockTokenCountMockFormat];

