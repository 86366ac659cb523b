import { createHash } from 'node:crypto';

/**
 * Deterministic hashing for routing decisions an auditor must be able to recompute: SHA-256 of the
 * parts joined by NUL (so ("ab","c") and ("a","bc") differ), read as a 48-bit integer.
 */
function hash48(parts: readonly string[]): number {
  return createHash('sha256').update(parts.join('\u0000')).digest().readUIntBE(0, 6);
}

/** A uniform number in (0, 1] (never 0, so its logarithm is finite). */
export function stableUnit(parts: readonly string[]): number {
  return (hash48(parts) + 1) / 2 ** 48;
}

/** A bucket in [0, buckets). */
export function stableBucket(parts: readonly string[], buckets: number): number {
  return hash48(parts) % buckets;
}
