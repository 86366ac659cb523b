import type { ExpectedVersion } from './event-store.js';

/** The stream moved on since the caller read it (optimistic concurrency). */
export class WrongExpectedVersionError extends Error {
  override readonly name = 'WrongExpectedVersionError';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`Stream ${streamId} is at version ${actual}, expected ${String(expected)}`);
  }
}

/** Some but not all of a batch's event ids were stored already: a re-append that does not match. */
export class IdempotencyConflictError extends Error {
  override readonly name = 'IdempotencyConflictError';
  constructor(readonly streamId: string) {
    super(`Stream ${streamId}: part of this append was stored before; re-append the same events or new ones`);
  }
}
