import type { DurableProjection, ProjectionReplacement, RecordedEvent, SqlExecutor } from '../../src/kernel/index.js';
import { Decimal } from 'decimal.js';
import { type AttemptFinished, recorded, type RequestServedFromCache } from '../../events/index.js';

/** An attempt is billable when it succeeded or the provider produced (and will charge for) tokens. */
export function isBillable(data: AttemptFinished['data']): boolean {
  return data.outcome === 'success' || data.usage.input + data.usage.output > 0 || new Decimal(data.cost.total).gt(0);
}

/**
 * One statement per page: the billable attempts arrive as one JSON parameter, are inserted with
 * `ON CONFLICT DO NOTHING` (a replayed event can never bill twice), and only the rows actually inserted
 * are added to the tenants' running totals per UTC day and month — the increment happens in SQL, in
 * exact numeric. Set-based and free of a query builder: this runs for every request the gateway serves.
 * The recordset's types are the columns' (bigint tokens, numeric money rounded by numeric(38, 12)): a value
 * that fits neither — 1e308 tokens, a cost that is not a number — fails the statement, a deterministic
 * failure on which the runner halts the ledger at that event (README "When a projection halts").
 */
const LEDGER_PAGE = `
WITH page AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
    request_id text, attempt integer, tenant_id text, key_id text, alias text, deployment_id text, provider_id text, model text,
    input_tokens bigint, cached_input_tokens bigint, cache_write_tokens bigint, output_tokens bigint, reasoning_tokens bigint,
    cost_usd numeric, saved_usd numeric, price_version integer, outcome text, usage_evidence text, global_position bigint, recorded_at timestamptz)
), inserted AS (
  INSERT INTO cost_ledger (request_id, attempt, tenant_id, key_id, alias, deployment_id, provider_id, model, input_tokens,
    cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, saved_usd, price_version, outcome, usage_evidence,
    global_position, recorded_at)
  SELECT request_id, attempt, tenant_id, key_id, alias, deployment_id, provider_id, model, input_tokens, cached_input_tokens,
    cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, saved_usd, price_version, outcome, usage_evidence, global_position, recorded_at
  FROM page
  ON CONFLICT (request_id, attempt) DO NOTHING
  RETURNING tenant_id, cost_usd, saved_usd, recorded_at
), accrued AS (
  SELECT tenant_id, period.name AS period, date_trunc(period.name, recorded_at, 'UTC') AS period_start, sum(cost_usd) AS amount,
    sum(saved_usd) AS saved
  FROM inserted CROSS JOIN (VALUES ('day'), ('month')) AS period(name)
  GROUP BY tenant_id, period.name, date_trunc(period.name, recorded_at, 'UTC')
)
INSERT INTO tenant_spend (tenant_id, period, period_start, spent_usd, saved_usd)
SELECT tenant_id, period, period_start, amount, saved FROM accrued
ON CONFLICT (tenant_id, period, period_start) DO UPDATE SET spent_usd = tenant_spend.spent_usd + EXCLUDED.spent_usd,
  saved_usd = tenant_spend.saved_usd + EXCLUDED.saved_usd`;

/** A cache hit's ledger row: attempt 0 (no provider attempt), zero tokens and cost, and the saving. */
export const CACHE_HIT_ATTEMPT = 0;

/**
 * The exactly-once cost ledger: one row per billable attempt, keyed (request_id, attempt), with tenant
 * spend derived from the rows actually inserted — all in the transaction that moves the checkpoint.
 */
export class CostLedgerProjection implements DurableProjection {
  readonly name = 'cost-ledger';
  readonly eventTypes = ['AttemptFinished', 'RequestServedFromCache'] as const;

  async handle(manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
    const rows: unknown[] = [];
    for (const event of recorded(events)) {
      if (event.type === 'RequestServedFromCache') {
        rows.push(cacheHitRow(event.data, event.globalPosition, event.recordedAt));
        continue;
      }
      if (event.type !== 'AttemptFinished') continue;
      const { data } = event;
      if (!isBillable(data)) continue;
      rows.push({
        request_id: data.requestId,
        attempt: data.attempt,
        tenant_id: data.tenantId,
        key_id: data.keyId,
        alias: data.alias,
        deployment_id: data.deploymentId,
        provider_id: data.providerId,
        model: data.model,
        input_tokens: data.usage.input,
        cached_input_tokens: data.usage.cachedInput,
        cache_write_tokens: data.usage.cacheWrite,
        output_tokens: data.usage.output,
        reasoning_tokens: data.usage.reasoning,
        // A JSON string, so the exact decimal never passes through a float.
        cost_usd: data.cost.total,
        saved_usd: '0',
        price_version: data.priceVersion,
        outcome: data.outcome,
        usage_evidence: data.usageEvidence,
        global_position: event.globalPosition,
        recorded_at: event.recordedAt.toISOString(),
      });
    }
    // Every batch: a named statement, parsed and planned once per connection.
    if (rows.length > 0) await manager.query(LEDGER_PAGE, [JSON.stringify(rows)], 'switchyard_ledger_page_v2');
  }

  /** Rebuilt aside into copies of both tables (the projection keeps no state between pages). */
  replacement(): ProjectionReplacement {
    return { projection: new CostLedgerProjection(), tables: [{ name: 'cost_ledger' }, { name: 'tenant_spend' }] };
  }
}

function cacheHitRow(data: RequestServedFromCache['data'], globalPosition: number, recordedAt: Date): Record<string, unknown> {
  return {
    request_id: data.requestId,
    attempt: CACHE_HIT_ATTEMPT,
    tenant_id: data.tenantId,
    key_id: data.keyId,
    alias: data.alias,
    deployment_id: data.deploymentId,
    provider_id: data.providerId,
    model: data.model,
    // No provider consumed anything for this answer.
    input_tokens: 0,
    cached_input_tokens: 0,
    cache_write_tokens: 0,
    output_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: '0',
    saved_usd: data.savedCostUsd,
    price_version: data.priceVersion,
    outcome: 'cache_hit',
    usage_evidence: 'cache',
    global_position: globalPosition,
    recorded_at: recordedAt.toISOString(),
  };
}
