import type { ClientFormat } from '../client-format.js';
import { parseOpenAiChatRequest } from './openai-chat-request.js';
import { toOpenAiCompletion } from './openai-chat-response.js';
import { OpenAiChatStreamEncoder } from './openai-chat-stream.js';
import { openAiErrorBody } from './openai-error-envelope.js';

export const openAiClientFormat: ClientFormat = {
  name: 'openai',
  parseChat: parseOpenAiChatRequest,
  responseId: (requestId) => `chatcmpl-${requestId.replace(/-/g, '')}`,
  encodeChat: toOpenAiCompletion,
  streamEncoder: (identity, request) => new OpenAiChatStreamEncoder(identity, request.includeUsage),
  errorBody: openAiErrorBody,
};
