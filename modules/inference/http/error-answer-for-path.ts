import { adminErrorAnswer, answersInAdminEnvelope } from '../../admin/index.js';
import type { GatewayError } from '../../canonical/index.js';
import { clientFormatForPath } from './client-format-for-path.js';
import { type ErrorAnswer, errorAnswer } from './respond-with-error.js';

/**
 * An error raised by the HTTP layer itself (before or instead of a controller), in the envelope of the
 * request's path: the admin envelope under /admin and /console/api, Anthropic's for /v1/messages, OpenAI's elsewhere.
 * Without a path (Node refused the request line itself) it is OpenAI's, the format most clients speak.
 */
export function errorAnswerForPath(url: string | null, method: string, error: GatewayError): ErrorAnswer {
  if (url !== null && answersInAdminEnvelope(url)) return adminErrorAnswer(error, method, url);
  return errorAnswer(clientFormatForPath(url ?? '/'), error);
}
