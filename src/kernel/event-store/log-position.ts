/**
 * A PostgreSQL transaction id (`xid8`: 64 bits, epoch-extended, never wraps). A bigint, so that every
 * comparison in the process is numeric; a decimal string sorts '11312' before '5686', which once
 * read the log out of commit order as soon as ids passed a power of ten.
 */
export type TransactionId = bigint;

/**
 * A position in the global read order (DESIGN §4): events are read by (transactionId, globalPosition),
 * both compared as numbers. Everything at or before a position has been read.
 */
export interface LogPosition {
  readonly transactionId: TransactionId;
  readonly globalPosition: number;
}

export const START: LogPosition = Object.freeze({ transactionId: 0n, globalPosition: 0 });

export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.transactionId !== b.transactionId) return a.transactionId < b.transactionId ? -1 : 1;
  return a.globalPosition - b.globalPosition;
}

export function samePosition(a: LogPosition, b: LogPosition): boolean {
  return a.transactionId === b.transactionId && a.globalPosition === b.globalPosition;
}

/** `transactionId:globalPosition`, for status output and logs. */
export function formatPosition(position: LogPosition): string {
  return `${position.transactionId}:${position.globalPosition}`;
}

/**
 * An xid8 as a statement parameter: its decimal text, which the statement casts with `$n::xid8`
 * (both drivers send text; the cast makes the server compare it as xid8, never as text).
 */
export function xid8Param(id: TransactionId): string {
  return id.toString();
}

/** An xid8 column as both drivers return it (decimal text). */
export function parseXid8(value: string | number | bigint): TransactionId {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new Error(`Unsafe transaction id ${value}`);
  if (typeof value === 'string' && !/^\d+$/.test(value)) throw new Error(`Not a transaction id: ${value}`);
  return BigInt(value);
}
