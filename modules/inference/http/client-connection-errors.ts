import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError } from '../../canonical/index.js';
import { errorAnswerForPath } from './error-answer-for-path.js';
import type { HttpSettings } from './http-settings.js';
import type { ErrorAnswer } from './respond-with-error.js';

/** Node's default limit on the request line and headers (`--max-http-header-size`). */
const MAX_HEADER_BYTES = 16 * 1024;
/**
 * After an error answer the connection is closed once the answer is flushed and the client has had this
 * long to read it: closing with the client's bytes unread would reset the connection and could take
 * the answer with it.
 */
const LINGER_MS = 2_000;

interface InFlight {
  url: string;
  method: string;
  requestId: string;
  response: ServerResponse;
}

type ClientError = Error & { code?: string; rawPacket?: Buffer };

/**
 * Errors Node raises on a client connection before or instead of a route: a malformed request (400),
 * headers too large (431), chunk extensions too large (413), the headers or body timeout (408). They are
 * answered in the envelope of the request's path, with its request id when a request had begun, and
 * the connection is closed; without this Node (or Fastify) answers in a shape no client SDK reads.
 */
export class ClientConnectionErrors {
  private readonly logger = new Logger('Http');
  private readonly inFlight = new WeakMap<Socket, InFlight>();

  constructor(private readonly settings: HttpSettings) {}

  /**
   * An `onRequest` hook: remembers which request a connection is serving until both its answer is written
   * and its body is received (a refusal may be sent before the body, which Node then discards).
   */
  readonly track = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const socket = request.raw.socket;
    const entry: InFlight = { url: request.url, method: request.method, requestId: request.id, response: reply.raw };
    this.inFlight.set(socket, entry);
    let open = 2;
    const closed = () => {
      if (--open === 0 && this.inFlight.get(socket) === entry) this.inFlight.delete(socket);
    };
    reply.raw.once('close', closed);
    request.raw.once('close', closed);
    done();
  };

  /** Fastify's `clientErrorHandler` (Node's `clientError` event). */
  readonly handle = (raised: Error, socket: Socket): void => {
    const error = raised as ClientError;
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const current = this.inFlight.get(socket);
    if (current?.response.headersSent || !socket.writable) {
      // An answer is already on its way (or sent, and the rest of the body timed out): nothing can be added.
      socket.destroy();
      return;
    }
    const url = current?.url ?? requestTarget(error.rawPacket);
    const answer = errorAnswerForPath(url, current?.method ?? 'GET', this.toGatewayError(error, current !== undefined));
    lingerThenClose(socket);
    if (current && !current.response.destroyed) {
      current.response.writeHead(answer.status, Object.assign({}, answer.headers, {
        'content-length': Buffer.byteLength(answer.body),
        'x-request-id': current.requestId,
        connection: 'close',
      }));
      current.response.end(answer.body);
      return;
    }
    socket.end(rawResponse(answer));
  };

  private toGatewayError(error: ClientError, receivingBody: boolean): GatewayError {
    switch (error.code) {
      case 'ERR_HTTP_REQUEST_TIMEOUT':
        return receivingBody
          ? new GatewayError(408, 'request_timeout', `The request body did not arrive within ${seconds(this.settings.bodyTimeoutMs)} (SWITCHYARD_HTTP_BODY_TIMEOUT_MS).`)
          : new GatewayError(408, 'request_timeout', `The request headers did not arrive within ${seconds(this.settings.headersTimeoutMs)} (SWITCHYARD_HTTP_HEADERS_TIMEOUT_MS).`);
      case 'HPE_HEADER_OVERFLOW':
        return new GatewayError(431, 'request_headers_too_large', `The request line and headers exceed ${MAX_HEADER_BYTES / 1024} KiB (a fixed limit of the gateway).`);
      case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
        return new GatewayError(413, 'request_too_large', 'The chunk extensions of the request body are too large.');
      default:
        this.logger.debug(`malformed request refused: ${error.code ?? error.message}`);
        return new GatewayError(400, 'invalid_request', 'The request is not valid HTTP/1.1.');
    }
  }
}

/** The request target from the bytes Node could not parse, when the request line is among them. */
function requestTarget(rawPacket: Buffer | undefined): string | null {
  if (!rawPacket) return null;
  const line = /^[A-Z]{3,10} (\/\S*) HTTP\/1\.[01]\r?\n/.exec(rawPacket.toString('latin1', 0, Math.min(rawPacket.length, 8_192)));
  return line ? line[1] : null;
}

function rawResponse(answer: ErrorAnswer): string {
  const headers = Object.assign({}, answer.headers, { 'content-length': String(Buffer.byteLength(answer.body)), connection: 'close' });
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}\r\n${lines}\r\n${answer.body}`;
}

function lingerThenClose(socket: Socket): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
