import type { StoredAnswer } from './stored-answer.js';

/**
 * What a request carrying an Idempotency-Key finds: it runs (`owner`), another request with the key
 * is running (`pending`: wait, then ask again), the key's outcome is stored (`completed`), or the key
 * was used with a different body (`mismatch`).
 */
export type IdempotencyClaim =
  | { kind: 'owner' }
  | { kind: 'pending' }
  | { kind: 'completed'; answer: StoredAnswer }
  | { kind: 'mismatch' };

/** A key's record: held by its owner while the request runs, then its outcome for the retention window. */
export type IdempotencyRecord =
  | { state: 'pending'; fingerprint: string; owner: string }
  | { state: 'done'; fingerprint: string; owner: string; answer: StoredAnswer };

/**
 * Idempotency records, per principal and key (`scope`): Redis (shared by every node, so a retry that
 * lands on another node still finds the outcome) or this process's byte-bounded memory. Outcomes are
 * content, so they live here and never in events. `owner` identifies one claim: only it may renew,
 * settle or abandon the record.
 */
export interface IdempotencyStore {
  /** Takes the key for `owner` for `leaseMs` when nobody holds it; otherwise says what holds it. */
  claim(scope: string, fingerprint: string, owner: string, leaseMs: number): Promise<IdempotencyClaim>;
  /** Extends a running request's lease (a crashed owner's lease runs out, and a retry may run). */
  renew(scope: string, owner: string, leaseMs: number): Promise<void>;
  /** Replaces the owner's pending record with the outcome, kept for `retentionMs`. */
  settle(scope: string, owner: string, answer: StoredAnswer, retentionMs: number): Promise<void>;
  /** Drops the owner's pending record (the request ended without a stored outcome: a retry runs again). */
  abandon(scope: string, owner: string): Promise<void>;
}

export function claimOf(record: IdempotencyRecord, fingerprint: string): IdempotencyClaim {
  if (record.fingerprint !== fingerprint) return { kind: 'mismatch' };
  return record.state === 'pending' ? { kind: 'pending' } : { kind: 'completed', answer: record.answer };
}
