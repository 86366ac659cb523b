import type { PathStyle } from '../../canonical/index.js';
import { anthropicClientFormat } from '../formats/anthropic/anthropic-client-format.js';
import type { ClientFormat } from '../formats/client-format.js';
import { openAiClientFormat } from '../formats/openai/openai-client-format.js';
import { responsesClientFormat } from '../formats/responses/responses-client-format.js';

const ANTHROPIC_PATHS = /^\/v1\/messages(?:[/?]|$)/;
const RESPONSES_PATHS = /^\/v1\/responses(?:[/?]|$)/;

/**
 * The envelope an error on this path is written in, for errors raised before a controller runs
 * (malformed JSON, body too large, unknown route): Anthropic clients get Anthropic's envelope, Responses
 * clients OpenAI's (the Responses API's own).
 */
export function clientFormatForPath(path: string): ClientFormat {
  if (ANTHROPIC_PATHS.test(path)) return anthropicClientFormat;
  return RESPONSES_PATHS.test(path) ? responsesClientFormat : openAiClientFormat;
}

/** How errors on this path name a parameter: `messages.0.content` for Anthropic clients, `messages[0].content` otherwise. */
export function parameterPathStyleForPath(path: string): PathStyle {
  return ANTHROPIC_PATHS.test(path) ? 'dots' : 'brackets';
}
