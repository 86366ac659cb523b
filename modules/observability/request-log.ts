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
  content?: { prompt: string | null; completion: string | null };
}

/**
 * The request log: one JSON line per request on stdout (pino, asynchronous so the hot path never waits
 * on the terminal), flushed at shutdown. Nothing here can carry a key: the line's fields are typed.
 */
export class RequestLog {
  private readonly logger: Logger;
  private readonly destination: DestinationStream & { flushSync?: () => void };

  /** `level`: the least severe line written (LOG_LEVEL's `log` is pino's `info`). */
  constructor(level: 'error' | 'warn' | 'info' | 'debug', destination?: DestinationStream) {
    this.destination = destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096 });
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
    this.logger[level](line, 'request');
  }

  flush(): void {
    try {
      this.destination.flushSync?.();
    } catch {
      // A destination that is not ready (nothing written yet) has nothing to flush.
    }
  }
}
