/** How the mock provider answers: timing, size and injected faults. Tests set it per scenario. */
export interface MockBehaviour {
  /** Buffered responses: delay before the answer. Streams: delay before the headers. */
  latencyMs: number;
  /** Streams: delay between the headers and the first content chunk. */
  ttftMs: number;
  /** Streams: delay between content chunks. */
  chunkGapMs: number;
  /** Content pieces (text words or tool-argument fragments); also the reported completion tokens. */
  chunks: number;
  /** Answer with this HTTP error status instead (e.g. 500, 503, 429). */
  status: number | null;
  /** Fail this share of requests (0..1) with `status` (500 when unset); the rest succeed. */
  failureRate: number;
  /** With `status`: the error's message in the format's envelope (a provider's own words, e.g. its context-length refusal); a generic one when null. */
  errorMessage: string | null;
  /** With a 429/503: the retry-after header, in seconds. */
  retryAfterSeconds: number | null;
  /** Hang: before sending headers, after headers but before the first token, or mid-stream. */
  stall: 'before-headers' | 'before-first-token' | 'mid-stream' | null;
  /** Streams: destroy the connection after this many content chunks. */
  dropAfterChunks: number | null;
  /** Streams: send a frame that is not JSON after this many content chunks. */
  malformedAfterChunks: number | null;
  /** Streams: send an error object inside the 200 stream after this many content chunks. */
  errorAfterChunks: number | null;
  /** Report cached prompt tokens (prompt_tokens_details.cached_tokens and the like). */
  cachedTokens: number;
  /** Report usage at all (false simulates a provider that omits it). */
  usage: boolean;
  /**
   * Fields written over the usage the mock reports, in its wire format's own names and as given (e.g.
   * `{ "prompt_tokens": -5 }` for OpenAI, `{ "input_tokens": 1e308 }` for Anthropic,
   * `{ "promptTokenCount": "100" }` for Gemini): a careless provider's numbers, for testing what the
   * gateway believes. Anthropic streams get them in message_start and message_delta alike.
   */
  usageFields: Record<string, unknown> | null;
  /**
   * Answer a request with two tools or more by calling the first two in parallel. The OpenAI dialect
   * interleaves the calls' argument pieces (call 0, call 1, call 0, …), as OpenAI may; the others ignore it.
   */
  parallelToolCalls: boolean;
  /**
   * Answer with this text (split into `chunks` pieces), and fill the string values of tool arguments with it: what
   * a model that writes given content would say (content-policy output checks). Null: the mock's own words.
   */
  text: string | null;
  /** Answer with the prompt's own text (every message's text, joined by newlines), as `text` does: a model that copies. */
  echo: boolean;
}

export const DEFAULT_BEHAVIOUR: MockBehaviour = Object.freeze({
  latencyMs: 0,
  ttftMs: 0,
  chunkGapMs: 0,
  chunks: 12,
  status: null,
  failureRate: 0,
  errorMessage: null,
  retryAfterSeconds: null,
  stall: null,
  dropAfterChunks: null,
  malformedAfterChunks: null,
  errorAfterChunks: null,
  cachedTokens: 0,
  usage: true,
  usageFields: null,
  parallelToolCalls: false,
  text: null,
  echo: false,
});

export interface MockScenario {
  /** Applies to requests for this upstream model (any when absent). */
  model?: string;
  /** How many requests it applies to before it is used up (unbounded when absent). */
  times?: number;
  behaviour: Partial<MockBehaviour>;
}
