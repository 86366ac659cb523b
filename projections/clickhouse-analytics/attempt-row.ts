import { Decimal } from 'decimal.js';
import type { AttemptFinished, Recorded } from '../../events/index.js';
import { isBillable } from '../cost-ledger/index.js';

/** The columns of `attempts`, in the order `attemptRow` writes them. */
export const ATTEMPT_COLUMNS = [
  'event_id', 'transaction_id', 'global_position', 'recorded_at', 'request_id', 'attempt', 'tenant_id', 'key_id', 'alias',
  'deployment_id', 'provider_id', 'model', 'strategy', 'outcome', 'error_class', 'deadline', 'http_status', 'billable',
  'prompt_cache_hit', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens', 'output_tokens', 'reasoning_tokens',
  'usage_evidence', 'input_cost_usd', 'cached_input_cost_usd', 'cache_write_cost_usd', 'output_cost_usd', 'cost_usd',
  'price_version', 'latency_ms', 'ttft_ms', 'provider_request_id',
] as const;

/** The ledger's precision (numeric(24,12)): ClickHouse keeps the same digits, so sums agree to the last one. */
const SCALE = 12;

/** A row's values in its table's column order; null is SQL NULL. */
export type RowValues = Array<string | number | null>;

/**
 * One AttemptFinished as a TabSeparated line of `attempts`. The timestamp is the event's recorded_at in
 * UTC, truncated to the second: hour and day buckets are the same as the ledger's.
 */
export function attemptLine(event: Recorded<AttemptFinished>): string {
  return attemptValues(event).map(tabSeparated).join('\t');
}

/** The values of `attemptLine`, in ATTEMPT_COLUMNS order. */
export function attemptValues(event: Recorded<AttemptFinished>): RowValues {
  const { data } = event;
  return [
    event.eventId, event.transactionId.toString(), event.globalPosition, dateTime(event.recordedAt), data.requestId, data.attempt,
    data.tenantId, data.keyId, data.alias, data.deploymentId, data.providerId, data.model, data.routing?.strategy ?? '',
    data.outcome, data.errorClass ?? '', data.deadline ?? '', data.httpStatus ?? 0, isBillable(data) ? 1 : 0,
    data.usage.cachedInput > 0 ? 1 : 0, data.usage.input, data.usage.cachedInput, data.usage.cacheWrite, data.usage.output,
    data.usage.reasoning, data.usageEvidence, money(data.cost.input), money(data.cost.cachedInput), money(data.cost.cacheWrite),
    money(data.cost.output), money(data.cost.total), data.priceVersion, Math.max(0, Math.round(data.latencyMs)),
    data.ttftMs === null || data.ttftMs === undefined ? null : Math.max(0, Math.round(data.ttftMs)), data.providerRequestId ?? '',
  ];
}

/** `YYYY-MM-DD hh:mm:ss` in UTC (the column is DateTime('UTC')). */
export function dateTime(at: Date): string {
  return at.toISOString().slice(0, 19).replace('T', ' ');
}

/** A decimal string at the ledger's 12 places, rounded as PostgreSQL's numeric(24, 12) rounds. */
export function money(value: string): string {
  return new Decimal(value).toFixed(SCALE, Decimal.ROUND_HALF_UP);
}

/** TabSeparated escaping: backslash, tab, newline, carriage return and NUL; `\N` is NULL. */
export function tabSeparated(value: string | number | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return value.replace(/[\\\t\n\r\0]/g, (char) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' })[char]!);
}
