import type { IncomingHttpHeaders } from 'node:http';
import type { MockAnswer, MockInput } from './mock-script.js';

export type Frame = string | Buffer;

/** Per-request context a format renders with. */
export interface MockRenderContext {
  id: string;
  created: number;
  input: MockInput;
  answer: MockAnswer;
  /** False simulates a provider that omits usage. */
  reportUsage: boolean;
  /** Written over the reported usage object as given (MockBehaviour.usageFields). */
  usageFields: Record<string, unknown> | null;
}

/**
 * One provider wire format the mock speaks. The server decides timing and faults; the format only
 * parses requests and renders answers, so every format gets the same fault injection.
 */
export interface MockFormat {
  readonly name: string;
  /** Whether this format serves the request (method + path). */
  matches(method: string, path: string): boolean;
  /** Throws MockBadRequest when the body (or the query string) is not a valid request of this format. */
  parse(body: unknown, path: string, query: URLSearchParams): MockInput;
  /** How the provider refuses a request without its credential header, or null when it would pass. */
  authProblem?(headers: IncomingHttpHeaders, path: string): { status: number; message: string } | null;
  buffered(ctx: MockRenderContext): unknown;
  streamContentType: string;
  streamStart(ctx: MockRenderContext): Frame[];
  /** One piece of thinking (streamed before the answer when the request asked for reasoning). */
  reasoningPiece(ctx: MockRenderContext, piece: string, index: number): Frame[];
  /** After the last thinking piece: its signature and the switch to the answer, in formats that have them. */
  reasoningEnd(ctx: MockRenderContext): Frame[];
  textPiece(ctx: MockRenderContext, piece: string, index: number): Frame[];
  toolPiece(ctx: MockRenderContext, piece: string, index: number): Frame[];
  streamEnd(ctx: MockRenderContext): Frame[];
  /** Body of an HTTP error answer (`retryAfterSeconds` for formats that also put it in the body). */
  errorBody(status: number, message: string, retryAfterSeconds?: number | null): unknown;
  /** Extra headers of an HTTP error answer (Bedrock names the error type in `x-amzn-errortype`). */
  errorHeaders?(status: number): Record<string, string>;
  /** An error delivered inside a 200 stream. */
  streamError(message: string): Frame[];
  malformedFrame(): Frame;
}

export class MockBadRequest extends Error {}
