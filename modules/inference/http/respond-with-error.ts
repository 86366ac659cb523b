import type { ServerResponse } from 'node:http';
import { GatewayError } from '../../canonical/gateway-error.js';
import type { ClientFormat } from '../formats/client-format.js';

/** Writes a GatewayError in the client's envelope (unless the response already started). */
export function respondWithError(raw: ServerResponse, format: ClientFormat, error: GatewayError, requestId: string): void {
  if (raw.headersSent || raw.destroyed) {
    if (!raw.writableEnded) raw.end();
    return;
  }
  const body = JSON.stringify(format.errorBody(error));
  raw.writeHead(error.status === 499 ? 400 : error.status, {
    ...error.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  raw.end(body);
}

export function internalError(): GatewayError {
  return new GatewayError(500, 'internal_error', 'The gateway failed unexpectedly. The incident was logged; retry the request.');
}

export function toGatewayError(error: unknown): GatewayError | null {
  return error instanceof GatewayError ? error : null;
}
