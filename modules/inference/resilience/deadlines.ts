import { ProviderError } from '../../canonical/index.js';

/**
 * The deadlines of one request (issue 5 §5). Each has its own error so that the caller, the events and
 * an operator reading them can tell a slow connection from a silent model or a stalled stream.
 */
export type Deadline = 'connect' | 'ttft' | 'idle' | 'stream' | 'request' | 'write_progress';

/** The client-facing code of each deadline (OpenAI envelope `code`, SSE error event `code`). */
export const DEADLINE_CODES: Readonly<Record<Deadline, string>> = Object.freeze({
  connect: 'connect_timeout',
  ttft: 'first_token_timeout',
  idle: 'stream_idle_timeout',
  stream: 'stream_timeout',
  request: 'request_timeout',
  write_progress: 'slow_consumer',
});

const MESSAGES: Readonly<Record<Deadline, string>> = Object.freeze({
  connect: 'timed out connecting to the provider',
  ttft: 'no first token arrived in time',
  idle: 'the provider went silent between two chunks',
  stream: 'the stream reached its maximum lifetime',
  request: 'the request deadline passed',
  write_progress: 'the client did not read the stream in time',
});

/**
 * A deadline the gateway itself enforced. It is a ProviderError of class `timeout` (so routing treats
 * it as one), except the write-progress deadline, which is the client's doing and counts as a
 * cancellation.
 */
export class DeadlineExceeded extends ProviderError {
  constructor(readonly deadline: Deadline) {
    super(deadline === 'write_progress' ? 'cancelled' : 'timeout', MESSAGES[deadline]);
  }
}

/**
 * Starts a deadline: when `ms` pass first, `scope` is aborted with the deadline's own error, so whatever
 * follows the scope's signal fails as that deadline. The caller clears the timer when the work ends in
 * time (or refreshes it, for a deadline renewed by progress).
 */
export function armDeadline(scope: { abort(reason: unknown): void }, deadline: Deadline, ms: number): NodeJS.Timeout {
  return setTimeout(() => scope.abort(new DeadlineExceeded(deadline)), ms);
}

/**
 * Which deadline an attempt's error stands for, if any. The pipeline's own timers raise
 * DeadlineExceeded; the only deadline undici enforces before them is the connect timeout (its header
 * and body timeouts are set past the pipeline's timers as a backstop), so a status-less timeout from
 * an adapter is a connect timeout.
 */
export function deadlineOf(error: ProviderError | null): Deadline | null {
  if (!error) return null;
  if (error instanceof DeadlineExceeded) return error.deadline;
  if (error.errorClass === 'timeout' && error.httpStatus === null) return 'connect';
  return null;
}

/** Slack added to undici's own header/body timeouts so that the pipeline's timers always fire first. */
export const BACKSTOP_SLACK_MS = 1_000;
