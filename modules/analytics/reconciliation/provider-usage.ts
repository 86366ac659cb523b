import { Decimal } from 'decimal.js';

/** One provider's usage for one UTC day and model, as its export states it. */
export interface ProviderUsage {
  day: string;
  model: string;
  /** Present when the export carries tokens (a usage report). */
  tokens: { input: number; cachedInput: number; cacheWrite: number | null; output: number } | null;
  /** Present when the export carries money (a cost report), in USD. */
  costUsd: Decimal | null;
}

export class UsageExportError extends Error {
  override readonly name = 'UsageExportError';
}

/** Adds records of the same day and model (several files, several buckets per day, several line items). */
export function mergeUsage(records: readonly ProviderUsage[]): ProviderUsage[] {
  const merged = new Map<string, ProviderUsage>();
  for (const record of records) {
    const key = `${record.day}\u0000${record.model}`;
    const current = merged.get(key);
    if (!current) {
      merged.set(key, { ...record, tokens: record.tokens ? { ...record.tokens } : null });
      continue;
    }
    if (record.tokens) {
      const tokens = current.tokens ?? { input: 0, cachedInput: 0, cacheWrite: record.tokens.cacheWrite === null ? null : 0, output: 0 };
      tokens.input += record.tokens.input;
      tokens.cachedInput += record.tokens.cachedInput;
      tokens.output += record.tokens.output;
      if (record.tokens.cacheWrite !== null) tokens.cacheWrite = (tokens.cacheWrite ?? 0) + record.tokens.cacheWrite;
      current.tokens = tokens;
    }
    if (record.costUsd) current.costUsd = (current.costUsd ?? new Decimal(0)).plus(record.costUsd);
  }
  return [...merged.values()];
}

/** A UTC day from Unix seconds or an RFC 3339 timestamp, checking that a bucket does not span two days. */
export function bucketDay(start: Date, end: Date | null, where: string): string {
  if (Number.isNaN(start.getTime())) throw new UsageExportError(`${where}: the bucket start is not a valid time`);
  const day = start.toISOString().slice(0, 10);
  if (end && !Number.isNaN(end.getTime()) && end.getTime() - start.getTime() > 86_400_000) {
    throw new UsageExportError(`${where}: buckets wider than a day cannot be reconciled per day (export with bucket_width=1d)`);
  }
  return day;
}

export function count(value: unknown, where: string): number {
  if (value === null || value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new UsageExportError(`${where}: expected a token count, found ${JSON.stringify(value)}`);
  return value;
}
