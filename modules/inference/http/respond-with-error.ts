import type { ServerResponse } from 'node:http';
import { GatewayError } from '../../canonical/index.js';
import type { ClientFormat } from '../formats/client-format.js';
import { observationOf } from '../../observability/index.js';

/** An error answer before it is written: on a response, or on a bare socket (errors Node raises). */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A GatewayError in the client's envelope. */
export function errorAnswer(format: ClientFormat, error: GatewayError): ErrorAnswer {
  return {
    status: error.status === 499 ? 400 : error.status,
    headers: Object.assign({}, error.headers, { 'content-type': 'application/json; charset=utf-8' }),
    body: JSON.stringify(format.errorBody(error)),
  };
}

/** Writes a GatewayError in the client's envelope (unless the response already started). */
export function respondWithError(raw: ServerResponse, format: ClientFormat, error: GatewayError, requestId: string): void {
  observationOf(raw)?.answeredWith(error);
  writeAnswer(raw, errorAnswer(format, error), requestId);
}

/** Writes an error answer with its request id, unless the response already started (then it is only ended). */
export function writeAnswer(raw: ServerResponse, answer: ErrorAnswer, requestId: string): void {
  if (raw.headersSent || raw.destroyed) {
    if (!raw.writableEnded) raw.end();
    return;
  }
  raw.writeHead(answer.status, Object.assign({}, answer.headers, { 'content-length': Buffer.byteLength(answer.body), 'x-request-id': requestId }));
  raw.end(answer.body);
}

export function internalError(): GatewayError {
  return new GatewayError(500, 'internal_error', 'The gateway failed unexpectedly. The incident was logged; retry the request.');
}

export function toGatewayError(error: unknown): GatewayError | null {
  return error instanceof GatewayError ? error : null;
}
