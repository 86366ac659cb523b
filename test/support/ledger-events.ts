import type { AttemptFinished } from '../../events/request-events.js';
import type { AppendRequest } from '../../src/kernel/event-store/event-store.js';
import type { SqlEventStore } from '../../src/kernel/event-store/sql-event-store.js';
import { uuidv7 } from '../../src/kernel/ids.js';

export type AttemptData = AttemptFinished['data'];

/** A billable AttemptFinished of request `r{n}` (tenant acme or globex), as the pipeline would record it; `change` edits it. */
export function attemptFinished(n: number, change: (data: AttemptData) => void = () => undefined): AppendRequest {
  const data: AttemptData = {
    requestId: `r${String(n).padStart(6, '0')}`, attempt: 1, tenantId: n % 3 === 0 ? 'globex' : 'acme', keyId: 'app', alias: 'chat',
    deploymentId: 'primary', providerId: 'mock-upstream', model: 'model-primary', outcome: 'success', errorClass: null, httpStatus: 200,
    usage: { input: 100 + (n % 50), cachedInput: n % 7, cacheWrite: 0, output: 20 + (n % 30), reasoning: 0 }, usageEvidence: 'provider',
    cost: { input: '0.000250000000', cachedInput: '0', cacheWrite: '0', output: `0.000${String(n % 1000).padStart(3, '0')}000001`, total: '0', currency: 'USD' },
    priceVersion: 1, latencyMs: 12, ttftMs: null, providerRequestId: null, routing: { strategy: 'priority', candidates: ['primary'], reason: 'first' },
  };
  data.cost.total = (Number(data.cost.input) + Number(data.cost.output)).toFixed(12);
  change(data);
  return { streamId: `request-r${String(n).padStart(6, '0')}`, events: [{ eventId: uuidv7(), type: 'AttemptFinished', data }], expectedVersion: 'any' };
}

/** Appends requests in batches (one statement each, as the group committer does); returns their global positions in order. */
export async function appendAll(store: SqlEventStore, requests: readonly AppendRequest[], batch = 500): Promise<number[]> {
  const positions: number[] = [];
  for (let i = 0; i < requests.length; i += batch) {
    for (const result of await store.appendMany(requests.slice(i, i + batch))) {
      if (result instanceof Error) throw result;
      positions.push(...result.positions);
    }
  }
  return positions;
}

/** An upstream that answered `"prompt_tokens": 1e308`: what the ledger's bigint cannot hold (nor ClickHouse's UInt64). */
export const POISONED_USAGE = 1e308;

/**
 * An AttemptFinished of the current schema (2) with POISONED_USAGE: what a bug past the provider boundary
 * would write. The production upcaster repairs such counts in schema-1 events, never in current ones, so
 * this one reaches the projections as it is — what a store with the production upcasters needs to halt one.
 */
export function poisonedAttempt(n: number): AppendRequest {
  const request = attemptFinished(n, (data) => (data.usage.input = POISONED_USAGE));
  return { ...request, events: request.events.map((event) => ({ ...event, schemaVersion: 2 })) };
}
