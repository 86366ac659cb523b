import { assertJsonWithinBounds, type EmbeddingsRequest, invalidRequest, type JsonShape, unsupportedParameter } from '../../../canonical/index.js';

export type EmbeddingEncoding = 'float' | 'base64';

const KNOWN = new Set(['model', 'input', 'encoding_format', 'dimensions', 'user']);
/** An embeddings body holds no client-defined JSON: every field is structured. */
const OPENAI_EMBEDDINGS_SHAPE: JsonShape = { pathStyle: 'brackets', freeForm: [] };
/** OpenAI's own bound on inputs per request. */
const MAX_INPUTS = 2048;

/**
 * OpenAI `POST /v1/embeddings` body → canonical request plus the encoding the client wants. Token
 * arrays (`input` of integers) are refused: routes may be any provider, and token ids are
 * tokenizer-specific, so only text is portable.
 */
export function parseOpenAiEmbeddingsRequest(body: unknown): { request: EmbeddingsRequest; encoding: EmbeddingEncoding } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidRequest('The request body must be a JSON object.');
  assertJsonWithinBounds(body, OPENAI_EMBEDDINGS_SHAPE);
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!KNOWN.has(key) && fields[key] !== null && fields[key] !== undefined) {
      throw unsupportedParameter(key, 'Switchyard does not support it for embeddings; remove it.');
    }
  }
  const model = fields.model;
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest("'model' is required and must be a string.", 'model');

  const encoding = fields.encoding_format ?? 'float';
  if (encoding !== 'float' && encoding !== 'base64') throw invalidRequest("'encoding_format' must be 'float' or 'base64'.", 'encoding_format');

  let dimensions: number | null = null;
  if (fields.dimensions !== undefined && fields.dimensions !== null) {
    if (typeof fields.dimensions !== 'number' || !Number.isInteger(fields.dimensions) || fields.dimensions < 1 || fields.dimensions > 65536) {
      throw invalidRequest("'dimensions' must be a positive integer.", 'dimensions');
    }
    dimensions = fields.dimensions;
  }
  let user: string | null = null;
  if (fields.user !== undefined && fields.user !== null) {
    if (typeof fields.user !== 'string') throw invalidRequest("'user' must be a string.", 'user');
    user = fields.user;
  }
  return { request: { model, inputs: parseInput(fields.input), dimensions, user }, encoding };
}

function parseInput(input: unknown): string[] {
  if (input === undefined || input === null) throw invalidRequest("'input' is required: a string or an array of strings.", 'input');
  if (typeof input === 'string') {
    if (input.length === 0) throw invalidRequest("'input' must not be empty.", 'input');
    return [input];
  }
  if (!Array.isArray(input) || input.length === 0) throw invalidRequest("'input' must be a non-empty string or a non-empty array of strings.", 'input');
  if (input.every((item) => typeof item === 'number') || input.every((item) => Array.isArray(item))) {
    throw unsupportedParameter('input', 'token arrays are not supported; send the text itself.');
  }
  if (input.length > MAX_INPUTS) throw invalidRequest(`'input' may hold at most ${MAX_INPUTS} items.`, 'input');
  input.forEach((item, index) => {
    if (typeof item !== 'string') throw invalidRequest(`input[${index}] must be a string.`, `input[${index}]`);
    if (item.length === 0) throw invalidRequest(`input[${index}] must not be empty.`, `input[${index}]`);
  });
  return input as string[];
}
