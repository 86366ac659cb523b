import { withThoughtSignatures } from '../../../canonical/index.js';
import type { ClientFormat } from '../client-format.js';
import { responsesErrorBody } from './responses-error-envelope.js';
import { responsesParameterName } from './responses-parameter-names.js';
import { parseResponsesRequest } from './responses-request.js';
import { toResponsesObject } from './responses-response.js';
import { ResponsesStreamEncoder } from './responses-stream.js';

/**
 * OpenAI Responses (`POST /v1/responses`) over the canonical model, so it reaches every provider
 * format. Its errors use OpenAI's envelope (`{error: {message, type, param, code}}`), as the API does.
 */
export const responsesClientFormat: ClientFormat = {
  name: 'responses',
  // Thought signatures ride on tool-call ids (see canonical/thought-signature.ts).
  parseChat: (body) => withThoughtSignatures(parseResponsesRequest(body)),
  responseId: (requestId) => `resp_${requestId.replace(/-/g, '')}`,
  encodeChat: toResponsesObject,
  streamEncoder: (identity, request) => new ResponsesStreamEncoder(identity, request),
  errorBody: responsesErrorBody,
  parameterName: responsesParameterName,
};
