import pino, { type DestinationStream, type Logger } from 'pino';

/** One request's log line (docs/operations.md "Request log"): ids, counts and classes; content only when opted in, redacted. */
export interface RequestLogLine {
  requestId: string;
  method: string;
  path: string;
  operation: string;
  /** The HTTP status sent. */
  status: number;
  /** Set when a stream that started with 200 ended otherwise (the status its settlement recorded). */
  outcomeStatus?: number;
  errorClass: string | null;
  tenantId: string | null;
  keyId: string | null;
  alias: string | null;
  deployment: string | null;
  provider: string | null;
  stream: boolean;
  attempts: number;
  fallbackDepth: number;
  tokens: { input: number; output: number; cachedInput: number; cacheWrite: number; reasoning: number } | null;
  costUsd: string | null;
  latencyMs: number;
  overheadMs: number | null;
  ttftMs: number | null;
  traceId: string | null;
  /** What the exact cache did: `hit` (answered from it: no route, no attempt, no cost), `miss`, `bypass`; null when the request never reached it. */
  cache: CacheOutcome | null;
  /** What its Idempotency-Key did (`none` without one). */
  idempotency: IdempotencyOutcome;
  content?: { prompt: string | null; completion: string | null };
}

/** The exact cache's decision for a request (its `x-switchyard-cache` header). */
export type CacheOutcome = 'hit' | 'miss' | 'bypass';

/**
 * What a request's Idempotency-Key came to: `stored` (it ran, and its answer is kept for retries),
 * `not_stored` (it ran, but failed or was cut, so a retry runs again), `replayed` (a retry answered from
 * the stored outcome), `key_reused` (422: the key with another body), `key_in_use` (409, or the client left,
 * while the first request with the key still ran), `unavailable` (the store did not answer: served without).
 */
export type IdempotencyOutcome = 'none' | 'stored' | 'not_stored' | 'replayed' | 'key_reused' | 'key_in_use' | 'unavailable';

/**
 * How long a line may wait in the buffer: on a quiet node the buffer never fills, and a line must still
 * reach stdout within a second of its request. Under load the buffer fills first and is written by itself.
 */
export const REQUEST_LOG_FLUSH_MS = 200;
const BUFFER_BYTES = 4096;

/**
 * The request log: one JSON line per request on stdout (pino, asynchronous so the hot path never waits
 * on the terminal). Lines are batched in a small buffer, written when it fills or REQUEST_LOG_FLUSH_MS
 * after the first line it holds (one timer per batch, not per line), and at shutdown. Nothing here can
 * carry a key: the line's fields are typed.
 */
export class RequestLog {
  private readonly logger: Logger;
  private readonly destination: DestinationStream & { flushSync?: () => void; flush?: () => void };
  private pending: NodeJS.Timeout | null = null;
  private readonly flushPending = (): void => {
    this.pending = null;
    try {
      this.destination.flush?.();
    } catch {
      // A destination already closed (shutdown) has nothing left to write.
    }
  };

  /** `level`: the least severe line written (LOG_LEVEL's `log` is pino's `info`). */
  constructor(level: 'error' | 'warn' | 'info' | 'debug', destination?: DestinationStream) {
    this.destination = destination ?? pino.destination({ dest: 1, sync: false, minLength: BUFFER_BYTES });
    this.logger = pino(
      { level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
      this.destination,
    );
  }

  write(line: RequestLogLine): void {
    const failed = line.status >= 400 || line.errorClass !== null;
    // Probes and scrapes arrive every few seconds: their successes are debug lines, not the request log.
    const routine = !failed && (line.operation === 'health' || line.operation === 'metrics');
    const level = line.status >= 500 || (line.outcomeStatus ?? 0) >= 500 ? 'error' : failed ? 'warn' : routine ? 'debug' : 'info';
    if (!this.logger.isLevelEnabled(level)) return;
    this.logger[level](line, 'request');
    if (this.pending === null) {
      this.pending = setTimeout(this.flushPending, REQUEST_LOG_FLUSH_MS);
      this.pending.unref();
    }
  }

  /** Writes what the buffer holds, now (shutdown). */
  flush(): void {
    if (this.pending !== null) clearTimeout(this.pending);
    this.pending = null;
    try {
      this.destination.flushSync?.();
    } catch {
      // A destination that is not ready (nothing written yet) has nothing to flush.
    }
  }
}
