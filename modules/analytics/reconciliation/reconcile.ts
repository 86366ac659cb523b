import { Decimal } from 'decimal.js';
import type { SqlExecutor } from '../../../src/kernel/index.js';
import { type ProviderUsage, mergeUsage } from './provider-usage.js';

export interface LedgerUsage {
  day: string;
  model: string;
  attempts: number;
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  costUsd: Decimal;
}

export type ReconciledField = 'inputTokens' | 'cachedInputTokens' | 'cacheWriteTokens' | 'outputTokens' | 'costUsd';

export interface Discrepancy {
  day: string;
  model: string;
  field: ReconciledField;
  ledger: string;
  provider: string;
  /** provider − ledger: positive when the provider charges more than Switchyard recorded. */
  difference: string;
}

export interface ReconciliationLine {
  day: string;
  /** The model without its snapshot date, the key both sides are compared by. */
  model: string;
  ledgerModels: string[];
  providerModels: string[];
  ledger: Omit<LedgerUsage, 'day' | 'model' | 'costUsd'> & { costUsd: string } | null;
  provider: { inputTokens: number | null; cachedInputTokens: number | null; cacheWriteTokens: number | null; outputTokens: number | null; costUsd: string | null } | null;
  discrepancies: Discrepancy[];
}

export interface ReconciliationReport {
  days: { from: string; to: string } | null;
  lines: ReconciliationLine[];
  discrepancies: Discrepancy[];
}

/**
 * Deployments usually name a model as its alias (gpt-4o-mini) while providers report the snapshot
 * (gpt-4o-mini-2024-07-18): a trailing snapshot date is not part of the comparison key.
 */
export function baseModel(model: string): string {
  return model.replace(/-(\d{4}-\d{2}-\d{2}|\d{8})$/, '');
}

/** The ledger's billed usage per UTC day and model for these providers, in [fromDay, toDay]. */
export async function ledgerUsage(database: SqlExecutor, providerIds: readonly string[], fromDay: string, toDay: string): Promise<LedgerUsage[]> {
  const rows = await database.query<{ day: string; model: string; attempts: string; input: string; cached: string; write: string; output: string; cost: string }>(
    `SELECT to_char(date_trunc('day', recorded_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, model,
            count(*)::text AS attempts, sum(input_tokens)::text AS input, sum(cached_input_tokens)::text AS cached,
            sum(cache_write_tokens)::text AS write, sum(output_tokens)::text AS output, sum(cost_usd)::text AS cost
     FROM cost_ledger
     WHERE provider_id = ANY($1::text[]) AND recorded_at >= $2::date AND recorded_at < ($3::date + 1) AND outcome <> 'cache_hit'
     GROUP BY 1, 2`,
    [providerIds, fromDay, toDay],
  );
  return rows.map((row) => ({
    day: row.day, model: row.model, attempts: Number(row.attempts), inputTokens: Number(row.input), cachedInputTokens: Number(row.cached),
    cacheWriteTokens: Number(row.write), outputTokens: Number(row.output), costUsd: new Decimal(row.cost),
  }));
}

/**
 * Puts the ledger beside the provider's export, per day and model. Tokens must match exactly; money
 * within `tolerance` (providers round their line items). Only what the export states is compared: a
 * usage report has no money, a cost report no tokens.
 */
export function reconcile(ledger: readonly LedgerUsage[], exported: readonly ProviderUsage[], tolerance: Decimal): ReconciliationReport {
  const provider = mergeUsage(exported);
  const keys = new Map<string, { day: string; model: string }>();
  const key = (day: string, model: string) => `${day}\u0000${baseModel(model)}`;
  for (const row of [...ledger, ...provider]) keys.set(key(row.day, row.model), { day: row.day, model: baseModel(row.model) });
  const hasTokens = provider.some((p) => p.tokens);
  const hasCacheWrites = provider.some((p) => p.tokens && p.tokens.cacheWrite !== null);
  const hasCost = provider.some((p) => p.costUsd);
  const lines: ReconciliationLine[] = [];
  for (const [id, { day, model }] of [...keys.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const mine = ledger.filter((row) => key(row.day, row.model) === id);
    const theirs = provider.filter((row) => key(row.day, row.model) === id);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const ledgerSide = mine.length ? {
      attempts: sum(mine.map((r) => r.attempts)), inputTokens: sum(mine.map((r) => r.inputTokens)), cachedInputTokens: sum(mine.map((r) => r.cachedInputTokens)),
      cacheWriteTokens: sum(mine.map((r) => r.cacheWriteTokens)), outputTokens: sum(mine.map((r) => r.outputTokens)),
      costUsd: mine.reduce((total, r) => total.plus(r.costUsd), new Decimal(0)),
    } : null;
    const tokens = theirs.filter((r) => r.tokens).map((r) => r.tokens!);
    const costs = theirs.filter((r) => r.costUsd).map((r) => r.costUsd!);
    const providerSide = theirs.length ? {
      inputTokens: tokens.length ? sum(tokens.map((t) => t.input)) : null,
      cachedInputTokens: tokens.length ? sum(tokens.map((t) => t.cachedInput)) : null,
      cacheWriteTokens: tokens.some((t) => t.cacheWrite !== null) ? sum(tokens.map((t) => t.cacheWrite ?? 0)) : null,
      outputTokens: tokens.length ? sum(tokens.map((t) => t.output)) : null,
      costUsd: costs.length ? costs.reduce((total, c) => total.plus(c), new Decimal(0)) : null,
    } : null;
    const discrepancies: Discrepancy[] = [];
    const compareTokens = (field: Exclude<ReconciledField, 'costUsd'>, applies: boolean) => {
      if (!applies) return;
      const mineValue = ledgerSide?.[field] ?? 0;
      const theirValue = providerSide?.[field] ?? 0;
      if (mineValue !== theirValue) {
        discrepancies.push({ day, model, field, ledger: String(mineValue), provider: String(theirValue), difference: String(theirValue - mineValue) });
      }
    };
    compareTokens('inputTokens', hasTokens);
    compareTokens('cachedInputTokens', hasTokens);
    compareTokens('cacheWriteTokens', hasCacheWrites);
    compareTokens('outputTokens', hasTokens);
    if (hasCost) {
      const mineCost = ledgerSide?.costUsd ?? new Decimal(0);
      const theirCost = providerSide?.costUsd ?? new Decimal(0);
      if (theirCost.minus(mineCost).abs().gt(tolerance)) {
        discrepancies.push({ day, model, field: 'costUsd', ledger: mineCost.toFixed(), provider: theirCost.toFixed(), difference: theirCost.minus(mineCost).toFixed() });
      }
    }
    lines.push({
      day, model,
      ledgerModels: [...new Set(mine.map((r) => r.model))].sort(),
      providerModels: [...new Set(theirs.map((r) => r.model))].sort(),
      ledger: ledgerSide ? { ...ledgerSide, costUsd: ledgerSide.costUsd.toFixed(12) } : null,
      provider: providerSide ? { ...providerSide, costUsd: providerSide.costUsd ? providerSide.costUsd.toFixed() : null } : null,
      discrepancies,
    });
  }
  const days = lines.map((line) => line.day).sort();
  return { days: days.length ? { from: days[0], to: days[days.length - 1] } : null, lines, discrepancies: lines.flatMap((line) => line.discrepancies) };
}

/** Every provider account of this type ever registered (a removed one still has ledger rows), by id. */
export async function providersOfType(database: SqlExecutor, type: string): Promise<string[]> {
  const rows = await database.query<{ provider_id: string }>(
    `SELECT provider_id FROM (
       SELECT DISTINCT ON (stream_id) data->>'providerId' AS provider_id, data->>'type' AS type FROM events
       WHERE event_type IN ('ProviderRegistered', 'ProviderUpdated') ORDER BY stream_id, stream_version DESC) latest
     WHERE type = $1 ORDER BY provider_id`,
    [type],
  );
  return rows.map((row) => row.provider_id);
}
