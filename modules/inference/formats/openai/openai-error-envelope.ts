import type { GatewayError } from '../../../canonical/index.js';

/** OpenAI's `error.type` for each status, as the official SDKs expect. */
function typeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 402) return 'insufficient_quota';
  if (status >= 500) return status === 503 ? 'service_unavailable_error' : 'server_error';
  return 'invalid_request_error';
}

export function openAiErrorBody(error: GatewayError): Record<string, unknown> {
  return {
    error: {
      message: error.message,
      type: typeFor(error.status),
      param: error.param,
      code: error.code,
      ...(error.detail ?? {}),
    },
  };
}
