import { createHash } from 'node:crypto';
import type pg from 'pg';
import type {
  ApiKeyUpdated, AttemptFinished, BreakerClosed, BreakerHalfOpened, BreakerOpened, RequestAdmitted, RequestCompleted, RequestRejected, RequestServedFromCache, TokenUsage,
} from '../../events/index.js';
import { SCHEMA_VERSIONS } from '../../events/event.js';
import type { ScaleCatalog } from './scale-config.js';
import type { EventRow as StoredEventRow } from '../../src/kernel/event-store/sql-event-store.js';
import { seededRandom } from '../../test/support/seeded-random.js';

/** How much history the database holds and when. */
export interface LogPlan {
  /** Events in the whole log, the applied catalog's included. */
  events: number;
  requests: number;
  /** Requests spread over this many days before `end`… */
  days: number;
  /** …except these, in the last `denseMinutes` (a busy quarter of an hour for the overview's window). */
  denseRequests: number;
  denseMinutes: number;
  end: Date;
}

/** One row of `events` as the store writes it (global position and transaction id are the table's own). */
type EventRow = Omit<StoredEventRow, 'global_position' | 'transaction_id'> & { recorded_at: string };

/** One append: the events of one commit, all recorded at its time (the default durability appends a request's events at once). */
interface Append {
  at: number;
  events: EventRow[];
}

export interface LogCounts {
  requestEvents: number;
  keyUpdates: number;
  breakerEvents: number;
}


/** A UUIDv7 for `at`, its random part from `seed` (unique per event, like the gateway's). */
export function uuidv7At(at: number, seed: string): string {
  const time = at.toString(16).padStart(12, '0');
  const rand = createHash('md5').update(seed).digest('hex');
  const variant = ((parseInt(rand[3], 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${rand.slice(0, 3)}-${variant}${rand.slice(4, 7)}-${rand.slice(7, 19)}`;
}

const usage = (input: number, output: number, cachedInput = 0): TokenUsage => ({ input, cachedInput, cacheWrite: 0, output, reasoning: 0 });

/** Cost of `tokens` at a deployment's price, as the gateway computes it: exact decimals at 12 places. */
function cost(tokens: TokenUsage, inputPer1M: string, outputPer1M: string) {
  const part = (count: number, per1M: string) => (count * Number(per1M) / 1e6).toFixed(12);
  const input = part(tokens.input, inputPer1M);
  const output = part(tokens.output, outputPer1M);
  return { input, cachedInput: '0.000000000000', cacheWrite: '0.000000000000', output, total: (Number(input) + Number(output)).toFixed(12), currency: 'USD' as const };
}

/**
 * Generates request `n`'s append: its shape drawn from its own seed — 3 % refused at admission (rate
 * limit, budget, content policy), 7 % answered from the exact cache, 45 % one attempt, 25 % two (a
 * fallback), 20 % three; a few fail or are cancelled. Every event is the type the pipeline writes, with
 * its schema version and the metadata the request journal gives it.
 */
function requestAppend(n: number, at: number, catalog: ScaleCatalog): Append {
  const draw = seededRandom(n * 2654435761);
  const key = catalog.keys[Math.floor(draw() * catalog.keys.length)];
  const alias = catalog.aliases[Math.floor(draw() * catalog.aliases.length)];
  const requestId = uuidv7At(at, `request ${n}`);
  const stream = `request-${requestId}`;
  const metadata = { actor: `key:${key.id}`, correlationId: requestId, nodeId: `node-${(n % 4) + 1}` };
  const recordedAt = new Date(at).toISOString();
  const rows: EventRow[] = [];
  const push = (type: string, data: unknown) => rows.push({
    stream_id: stream, stream_version: rows.length + 1, event_id: uuidv7At(at, `${requestId} ${rows.length}`), event_type: type,
    schema_version: SCHEMA_VERSIONS[type] ?? 1, data, metadata, recorded_at: recordedAt,
  });
  const who = { tenantId: key.tenant, keyId: key.id, alias: alias.name };
  const shape = draw();
  if (shape < 0.03) {
    const refusal = draw();
    const [status, code, reason, scope] = refusal < 0.6 ? [429, 'rate_limited', 'Rate limit reached for key.rpm', 'key.rpm']
      : refusal < 0.85 ? [402, 'budget_exceeded', 'The tenant budget for the month is exhausted', `tenant:${key.tenant}`]
        : [400, 'content_policy_violation', 'The input was blocked by a content policy', null];
    const data: RequestRejected['data'] = { requestId, reason, status, code, ...who, operation: 'chat', scope };
    push('RequestRejected', data);
    return { at, events: rows };
  }
  const input = 200 + Math.floor(draw() * 3000);
  const output = 20 + Math.floor(draw() * 800);
  const admitted: RequestAdmitted['data'] = {
    requestId, ...who, aliasVersion: 1, snapshotPosition: 1, clientFormat: draw() < 0.8 ? 'openai' : 'anthropic', operation: 'chat', stream: draw() < 0.5,
    estimatedInputTokens: input, reservedOutputTokens: 1024, idempotencyKey: null,
  };
  push('RequestAdmitted', admitted);
  const deploymentOf = (attempt: number) => catalog.deployments.find((d) => d.id === alias.routes[Math.min(attempt - 1, alias.routes.length - 1)].deployment)!;
  if (shape < 0.10) {
    const source = deploymentOf(1);
    const served: RequestServedFromCache['data'] = {
      requestId, ...who, aliasVersion: 1, sourceRequestId: uuidv7At(at - 3_600_000, `source ${n}`), deploymentId: source.id, providerId: source.provider, model: source.model,
      priceVersion: 1, usage: usage(input, output), savedCostUsd: cost(usage(input, output), source.inputPer1M, source.outputPer1M).total,
    };
    push('RequestServedFromCache', served);
    const completed: RequestCompleted['data'] = {
      requestId, status: 'success', httpStatus: 200, errorCode: null, fallbackDepth: 0, cacheHit: true,
      totals: { usage: usage(input, output), costUsd: '0.000000000000', attempts: 0, latencyMs: 2 + Math.floor(draw() * 6) },
    };
    push('RequestCompleted', completed);
    return { at, events: rows };
  }
  const attempts = shape < 0.55 ? 1 : shape < 0.80 ? 2 : 3;
  const ending = draw();
  const lastFails = attempts > 1 ? ending < 0.1 : ending < 0.02;
  const cancelled = !lastFails && ending > 0.995;
  let latency = 0;
  let billed = usage(0, 0);
  let total = 0;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const deployment = deploymentOf(attempt);
    const failed = attempt < attempts || lastFails;
    const errorClass = failed ? (['overloaded', 'timeout', 'rate_limited', 'connection'] as const)[Math.floor(draw() * 4)] : null;
    const tokens = failed ? usage(0, 0) : cancelled ? usage(input, Math.floor(output / 3)) : usage(input, output, Math.floor(draw() * input / 4));
    const price = cost(tokens, deployment.inputPer1M, deployment.outputPer1M);
    const latencyMs = failed ? 40 + Math.floor(draw() * 3000) : 300 + Math.floor(draw() * 6000);
    latency += latencyMs;
    const data: AttemptFinished['data'] = {
      requestId, attempt, ...who, deploymentId: deployment.id, providerId: deployment.provider, model: deployment.model,
      outcome: failed ? 'failed' : cancelled ? 'cancelled' : 'success', errorClass, deadline: errorClass === 'timeout' ? 'ttft' : null,
      httpStatus: failed ? (errorClass === 'rate_limited' ? 429 : errorClass === 'overloaded' ? 503 : null) : 200,
      usage: tokens, usageEvidence: 'provider', cost: price, priceVersion: 1, latencyMs, ttftMs: admitted.stream ? Math.floor(latencyMs / 5) : null,
      providerRequestId: failed ? null : `chatcmpl-${n}`, routing: { strategy: alias.strategy, candidates: alias.routes.map((r) => r.deployment), reason: attempt === 1 ? 'first' : 'fallback' },
    };
    push('AttemptFinished', data);
    if (!failed) billed = tokens;
    total += Number(price.total);
  }
  const status = lastFails ? 'failed' : cancelled ? 'cancelled' : 'success';
  const completed: RequestCompleted['data'] = {
    requestId, status, httpStatus: lastFails ? (attempts > 1 ? 503 : 502) : cancelled ? 499 : 200,
    errorCode: lastFails ? (attempts > 1 ? 'all_providers_unavailable' : 'upstream_error') : cancelled ? 'client_closed_request' : null,
    fallbackDepth: attempts - 1, cacheHit: false, totals: { usage: billed, costUsd: total.toFixed(12), attempts, latencyMs: latency + 3 },
  };
  push('RequestCompleted', completed);
  return { at, events: rows };
}

/** An operator tuning a key's limits (the grant as it now is): control-plane churn in the key streams. */
function keyUpdate(m: number, at: number, catalog: ScaleCatalog, versions: Map<string, number>): Append {
  const key = catalog.keys[m % catalog.keys.length];
  const stream = `apikey-${key.id}`;
  const version = (versions.get(stream) ?? 0) + 1;
  versions.set(stream, version);
  const data: ApiKeyUpdated['data'] = {
    keyId: key.id, scopes: ['inference', 'models:read'], aliases: [], limits: { rpm: 60 + (m % 50) * 10, tpm: null, maxConcurrency: 4 + (m % 8) }, expiresAt: null,
  };
  return {
    at,
    events: [{
      stream_id: stream, stream_version: version, event_id: uuidv7At(at, `key update ${m}`), event_type: 'ApiKeyUpdated', schema_version: 1, data,
      metadata: { actor: 'admin:ops', correlationId: uuidv7At(at, `key correlation ${m}`) }, recorded_at: new Date(at).toISOString(),
    }],
  };
}

/** One breaker incident on one node (opened, half-open after the cooldown, closed by trials): three appends. */
function breakerIncident(i: number, at: number, catalog: ScaleCatalog, versions: Map<string, number>): Append[] {
  const deployment = catalog.deployments[(i * 7) % catalog.deployments.length];
  const node = `node-${(i % 4) + 1}`;
  const stream = `breaker-${deployment.id}`;
  const next = () => {
    const version = (versions.get(stream) ?? 0) + 1;
    versions.set(stream, version);
    return version;
  };
  const metadata = { actor: 'system', nodeId: node, correlationId: deployment.id };
  const row = (offset: number, type: string, data: unknown, n: number): Append => ({
    at: at + offset,
    events: [{ stream_id: stream, stream_version: next(), event_id: uuidv7At(at + offset, `breaker ${i} ${n}`), event_type: type, schema_version: 1, data, metadata, recorded_at: new Date(at + offset).toISOString() }],
  });
  const opened: BreakerOpened['data'] = {
    deploymentId: deployment.id, reason: i % 3 === 0 ? 'consecutive_failures' : 'failure_rate', source: 'local', originNodeId: node,
    counts: { failures: 12, samples: 20, consecutiveFailures: 5 }, cooldownMs: 30_000, openUntil: new Date(at + 30_000).toISOString(),
  };
  const halfOpened: BreakerHalfOpened['data'] = { deploymentId: deployment.id, source: 'local', openedForMs: 30_000 };
  const closed: BreakerClosed['data'] = { deploymentId: deployment.id, source: 'local', originNodeId: node, trialSuccesses: 3 };
  return [row(0, 'BreakerOpened', opened, 0), row(30_000, 'BreakerHalfOpened', halfOpened, 1), row(31_000, 'BreakerClosed', closed, 2)];
}

/** Request events: the plan's requests, counted without writing (to size the rest of the log). */
export function countRequestEvents(plan: LogPlan, catalog: ScaleCatalog): number {
  let events = 0;
  for (let n = 0; n < plan.requests; n++) events += requestAppend(n, 0, catalog).events.length;
  return events;
}

const INSERT = `
INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata, recorded_at)
SELECT r.stream_id, r.stream_version, r.event_id, r.event_type, r.schema_version, r.data, r.metadata, r.recorded_at
FROM jsonb_to_recordset($1::jsonb) AS r(stream_id text, stream_version integer, event_id uuid, event_type text, schema_version smallint,
  data jsonb, metadata jsonb, recorded_at timestamptz, n integer)
ORDER BY r.n`;

/**
 * Writes the history into `events` in time order, one INSERT … SELECT per ~5,000 events (each its own
 * transaction, so transaction ids grow with time as a live log's do). The history is cut into slices of
 * time; each slice's appends (requests, key updates, breaker incidents) are generated, sorted by time and
 * written before the next slice is generated, so memory holds one slice.
 */
export async function writeScaleLog(
  client: pg.Client, catalog: ScaleCatalog, plan: LogPlan, counts: { keyUpdates: number; breakerIncidents: number },
  versions: Map<string, number>, onProgress: (written: number) => void,
): Promise<number> {
  const end = plan.end.getTime();
  const denseStart = end - plan.denseMinutes * 60_000;
  const start = end - plan.days * 86_400_000;
  const spread = plan.requests - plan.denseRequests;
  const requestAt = (n: number) => (n < spread ? start + Math.floor((n / spread) * (denseStart - start)) : denseStart + Math.floor(((n - spread) / plan.denseRequests) * (end - denseStart - 1000)));
  const SLICES = 400;
  let written = 0;
  let pending: EventRow[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    // Identity values follow the SELECT's order: `n` keeps the appends' order in the log.
    await client.query(INSERT, [JSON.stringify(pending.map((row, n) => ({ ...row, n })))]);
    written += pending.length;
    pending = [];
    onProgress(written);
  };
  for (let slice = 0; slice < SLICES; slice++) {
    const appends: Append[] = [];
    const range = (total: number) => [Math.floor((slice * total) / SLICES), Math.floor(((slice + 1) * total) / SLICES)] as const;
    const [r0, r1] = range(plan.requests);
    for (let n = r0; n < r1; n++) appends.push(requestAppend(n, requestAt(n), catalog));
    // Control-plane churn and incidents spread over the sparse part of the history, slice by slice.
    const sliceStart = start + Math.floor((slice / SLICES) * (denseStart - start));
    const sliceSpan = (denseStart - start) / SLICES;
    const [k0, k1] = range(counts.keyUpdates);
    for (let m = k0; m < k1; m++) appends.push(keyUpdate(m, sliceStart + Math.floor(((m - k0 + 0.5) / (k1 - k0)) * sliceSpan), catalog, versions));
    const [b0, b1] = range(counts.breakerIncidents);
    for (let i = b0; i < b1; i++) appends.push(...breakerIncident(i, sliceStart + Math.floor(((i - b0 + 0.3) / (b1 - b0)) * (sliceSpan - 40_000)), catalog, versions));
    appends.sort((a, b) => a.at - b.at);
    for (const append of appends) {
      pending.push(...append.events);
      if (pending.length >= 5000) await flush();
    }
  }
  await flush();
  return written;
}
