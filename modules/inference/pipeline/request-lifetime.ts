import type { ServerResponse } from 'node:http';
import { ProviderError } from '../../canonical/index.js';
import { armDeadline } from '../resilience/deadlines.js';
import { AbortScope } from '../../../src/kernel/index.js';

/**
 * One request's abort signal and its request deadline. The signal aborts when the client goes away or
 * the deadline passes; the deadline covers everything before the response starts (every attempt,
 * retry and wait) and buffered answers, and a stream ends it at its first output (the stream's own
 * deadlines rule from there).
 */
export class RequestLifetime {
  readonly abort = new AbortScope();
  private readonly startedAt = Date.now();
  private deadline: NodeJS.Timeout | null;

  constructor(
    raw: ServerResponse,
    private readonly requestTimeoutMs: number,
  ) {
    raw.on('close', () => {
      if (!raw.writableFinished) this.abort.abort(new ProviderError('cancelled', 'the client disconnected'));
    });
    this.deadline = armDeadline(this.abort, 'request', requestTimeoutMs);
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** Time left before the request deadline (negative once it passed). */
  remainingMs(): number {
    return this.requestTimeoutMs - (Date.now() - this.startedAt);
  }

  /** The first output went out: from here on the stream deadline, not the request deadline, applies. */
  endRequestDeadline(): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
  }

  dispose(): void {
    this.endRequestDeadline();
  }
}
