import type { IncomingHttpHeaders } from 'node:http';
import { MockBadRequest } from './mock-format.js';
import { openAiMockFormat } from './openai-mock-format.js';

/**
 * The word that makes the mock's moderation flag an input (case-sensitive, anywhere in it): tests put it in a prompt
 * to get a deterministic `flagged: true`, and everything else passes.
 */
export const DEFAULT_MODERATION_MARKER = 'MODERATION_FLAG';

/** OpenAI's moderation categories, in its order: what a flagged input reports (the marker flags `violence` and `harassment`). */
export const MOCK_MODERATION_CATEGORIES = [
  'harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm',
  'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
] as const;

/** What the marker flags: a `MODERATION_FLAG:<category>` names one category of its own instead. */
const MARKED_CATEGORIES: readonly string[] = ['violence', 'harassment'];

/** What the mock needs to know of a moderation request. */
export interface MockModerationInput {
  model: string;
  inputs: string[];
}

/** OpenAI `POST …/moderations` (openai, openai-compatible and the built-in mock provider); auth as for chat. */
export const openAiModerationMockFormat = {
  name: 'openai-moderations',
  matches: (method: string, path: string) => method === 'POST' && /\/moderations$/.test(path),
  authProblem: (headers: IncomingHttpHeaders, path: string) =>
    openAiMockFormat.authProblem!(headers, path.replace(/\/moderations$/, '/chat/completions')),
  parse(body: unknown): MockModerationInput {
    const request = body as Record<string, unknown> | null;
    if (!request || typeof request !== 'object' || Array.isArray(request)) throw new MockBadRequest('the body must be a JSON object');
    const model = request.model ?? 'omni-moderation-latest';
    if (typeof model !== 'string' || !model) throw new MockBadRequest("'model' must be a string");
    const input = request.input;
    const inputs = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((x) => typeof x === 'string') ? (input as string[]) : null;
    if (!inputs || inputs.length === 0) throw new MockBadRequest("'input' must be a string or an array of strings (the mock reads text inputs only)");
    return { model, inputs };
  },
  /** One result per input: flagged when it holds the marker; scores 0.99 for a flagged category, 0.0001 otherwise. */
  render(input: MockModerationInput, marker: string, id: string): unknown {
    return {
      id,
      model: input.model,
      results: input.inputs.map((text) => {
        const flagged = flaggedCategories(text, marker);
        const categories = Object.fromEntries(MOCK_MODERATION_CATEGORIES.map((category) => [category, flagged.includes(category)]));
        const scores = Object.fromEntries(MOCK_MODERATION_CATEGORIES.map((category) => [category, flagged.includes(category) ? 0.99 : 0.0001]));
        const applied = Object.fromEntries(MOCK_MODERATION_CATEGORIES.map((category) => [category, flagged.includes(category) ? ['text'] : []]));
        return { flagged: flagged.length > 0, categories, category_scores: scores, category_applied_input_types: applied };
      }),
    };
  },
  errorBody: (status: number, message: string) => ({
    error: { message, type: status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null },
  }),
};

function flaggedCategories(text: string, marker: string): string[] {
  const at = text.indexOf(marker);
  if (at < 0) return [];
  const named = /^:([a-z/-]+)/.exec(text.slice(at + marker.length))?.[1];
  return named && (MOCK_MODERATION_CATEGORIES as readonly string[]).includes(named) ? [named] : [...MARKED_CATEGORIES];
}
