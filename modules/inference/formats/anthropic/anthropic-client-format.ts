import { withThoughtSignatures } from '../../../canonical/index.js';
import { ANTHROPIC_PARAMETER_NAMES } from '../../../providers/index.js';
import type { ClientFormat } from '../client-format.js';
import { anthropicErrorBody } from './anthropic-error-envelope.js';
import { parseAnthropicMessagesRequest } from './anthropic-messages-request.js';
import { toAnthropicMessage } from './anthropic-messages-response.js';
import { AnthropicMessagesStreamEncoder } from './anthropic-messages-stream.js';

/** Anthropic Messages (`POST /v1/messages`) over the canonical model. */
export const anthropicClientFormat: ClientFormat = {
  name: 'anthropic',
  // Thought signatures ride on tool-call ids (see canonical/thought-signature.ts).
  parseChat: (body) => withThoughtSignatures(parseAnthropicMessagesRequest(body)),
  responseId: (requestId) => `msg_${requestId.replace(/-/g, '')}`,
  encodeChat: toAnthropicMessage,
  streamEncoder: (identity, _request, estimatedInputTokens) => new AnthropicMessagesStreamEncoder(identity, estimatedInputTokens),
  errorBody: anthropicErrorBody,
  parameterName: (parameter) => (ANTHROPIC_PARAMETER_NAMES as Readonly<Record<string, string>>)[parameter] ?? parameter,
};
