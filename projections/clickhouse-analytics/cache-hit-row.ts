import type { Recorded, RequestServedFromCache } from '../../events/index.js';
import { type RowValues, dateTime, money, tabSeparated } from './attempt-row.js';

/** The columns of `cache_hits`, in the order `cacheHitLine` writes them. */
export const CACHE_HIT_COLUMNS = [
  'event_id', 'transaction_id', 'global_position', 'recorded_at', 'request_id', 'tenant_id', 'key_id', 'alias',
  'deployment_id', 'provider_id', 'model', 'source_request_id', 'price_version', 'input_tokens', 'cached_input_tokens',
  'cache_write_tokens', 'output_tokens', 'reasoning_tokens', 'cost_usd', 'saved_usd',
] as const;

/**
 * One RequestServedFromCache as a TabSeparated line of `cache_hits`, as the ledger's row for it reads:
 * zero tokens and cost (no provider consumed anything for this answer) and the saving. The timestamp is
 * the event's recorded_at in UTC, truncated to the second, like the attempts'.
 */
export function cacheHitLine(event: Recorded<RequestServedFromCache>): string {
  return cacheHitValues(event).map(tabSeparated).join('\t');
}

/** The values of `cacheHitLine`, in CACHE_HIT_COLUMNS order. */
export function cacheHitValues(event: Recorded<RequestServedFromCache>): RowValues {
  const { data } = event;
  return [
    event.eventId, event.transactionId.toString(), event.globalPosition, dateTime(event.recordedAt), data.requestId,
    data.tenantId, data.keyId, data.alias, data.deploymentId, data.providerId, data.model, data.sourceRequestId, data.priceVersion,
    0, 0, 0, 0, 0, money('0'), money(data.savedCostUsd),
  ];
}
