import { timingSafeEqual } from 'node:crypto';

/** Compares two hex digests in constant time, so a presented credential's hash leaks nothing by timing. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
