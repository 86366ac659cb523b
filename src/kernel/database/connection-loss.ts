import { sqlErrorCode } from './database.js';

/**
 * SQLSTATEs that say the session or server went away, not that the statement was wrong: connection
 * exceptions (class 08), the server shutting down or terminating the backend (57P01 admin_shutdown is
 * what pg_terminate_backend sends), and a server that cannot take connections right now.
 */
const LOST_SESSION_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Socket-level failures node-postgres passes through. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** node-postgres reports a dropped socket by message only. */
const LOST_MESSAGES = [
  'Connection terminated',
  'connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection closed',
];

/**
 * True when a statement failed because its connection was lost (or could not be made). Such a failure
 * says nothing about the statement: it may not have run, or — for a COMMIT in flight — may have
 * committed. Only idempotent work (appends with pinned event ids, reads) may be retried after it.
 */
export function isConnectionLoss(error: unknown): boolean {
  const code = sqlErrorCode(error);
  if (code !== undefined) {
    if (code.startsWith('08') || LOST_SESSION_CODES.has(code) || SOCKET_CODES.has(code)) return true;
  }
  const candidate = error as { message?: unknown; driverError?: { message?: unknown } } | null;
  const message = String(candidate?.message ?? '') + ' ' + String(candidate?.driverError?.message ?? '');
  return LOST_MESSAGES.some((text) => message.includes(text));
}

export interface RetryOptions {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Delay before the first retry; doubles each time. */
  baseDelayMs: number;
  /** Called before each retry (for logging). */
  onRetry?: (error: unknown, attempt: number) => void;
}

/** Runs idempotent work again when its connection was lost, a bounded number of times with backoff. */
export async function retryOnConnectionLoss<T>(work: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= options.attempts || !isConnectionLoss(error)) throw error;
      options.onRetry?.(error, attempt);
      await new Promise((resolve) => setTimeout(resolve, options.baseDelayMs * 2 ** (attempt - 1)));
    }
  }
}

/**
 * A short, address-free description of a database failure for readiness output (which load balancers
 * and anyone on the network may read): the SQLSTATE or socket code, never the server's host or the DSN.
 */
export function describeDatabaseError(error: unknown): string {
  const code = sqlErrorCode(error);
  const message = String((error as { message?: unknown } | null)?.message ?? '');
  if (code && SOCKET_CODES.has(code)) return code === 'ECONNREFUSED' ? 'connection refused' : `connection failed (${code})`;
  if (code === '57P01' || code === '57P02') return `connection terminated by the server (SQLSTATE ${code})`;
  if (code === '57P03' || code === '53300') return `the server does not accept connections now (SQLSTATE ${code})`;
  if (code && /^[0-9A-Z]{5}$/.test(code)) return `SQLSTATE ${code}`;
  if (/^no answer within \d+ ms$/.test(message)) return message;
  if (isConnectionLoss(error)) return 'connection lost';
  return 'query failed';
}
