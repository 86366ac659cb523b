import { withThoughtSignatures } from '../../../canonical/index.js';
import type { ClientFormat } from '../client-format.js';
import { parseOpenAiChatRequest } from './openai-chat-request.js';
import { toOpenAiCompletion } from './openai-chat-response.js';
import { OpenAiChatStreamEncoder } from './openai-chat-stream.js';
import { openAiErrorBody } from './openai-error-envelope.js';

export const openAiClientFormat: ClientFormat = {
  name: 'openai',
  // Thought signatures ride on tool-call ids (see canonical/thought-signature.ts).
  parseChat: (body) => withThoughtSignatures(parseOpenAiChatRequest(body)),
  responseId: (requestId) => `chatcmpl-${requestId.replace(/-/g, '')}`,
  encodeChat: toOpenAiCompletion,
  streamEncoder: (identity, request) => new OpenAiChatStreamEncoder(identity, request.includeUsage),
  errorBody: openAiErrorBody,
};
