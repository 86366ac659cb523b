import type { RecordedEvent, SqlExecutor } from '../../src/kernel/index.js';
import type { ClickHouseConnection } from '../../projections/clickhouse-analytics/clickhouse-connection.js';
import { ClickHouseAnalyticsProjection } from '../../projections/clickhouse-analytics/clickhouse-analytics.projection.js';
import { clickhouseMigrations } from '../../migrations/clickhouse/index.js';

/**
 * ClickHouse as the projection sees it, in memory: raw rows per table (transaction id and position are
 * the 2nd and 3rd TabSeparated fields of both raw tables), an insert that can be made to fail — before it
 * applies, or after (the answer lost) — and the schema already migrated.
 */
class MemoryClickHouse {
  readonly database = 'analytics';
  readonly tables = new Map<string, string[]>();
  failNext: { table: string; applied: boolean } | null = null;

  table(name: string): string {
    return `${this.database}.${name}`;
  }

  async ensureDatabase(): Promise<void> {}

  async command(): Promise<void> {}

  async rows<Row>(query: string): Promise<Row[]> {
    if (query.includes('schema_migrations')) return clickhouseMigrations.map((m) => ({ version: String(m.version) })) as Row[];
    if (query.includes('system.processes')) return [{ running: '0' }] as Row[];
    const table = /FROM analytics\.(\w+)/.exec(query)![1];
    const newest = (this.tables.get(table) ?? []).map((line) => line.split('\t'))
      .sort((a, b) => Number(BigInt(b[1]) - BigInt(a[1])) || Number(b[2]) - Number(a[2]))[0];
    return (newest ? [{ mark_transaction: newest[1], mark_position: newest[2] }] : []) as Row[];
  }

  async insertTabSeparated(table: string, _columns: readonly string[], lines: readonly string[]): Promise<void> {
    const failing = this.failNext?.table === table ? this.failNext : null;
    if (failing) this.failNext = null;
    if (!failing || failing.applied) this.tables.set(table, [...(this.tables.get(table) ?? []), ...lines]);
    if (failing) throw new Error(`insert into ${table}: connection reset`);
  }

  positions(table: string): number[] {
    return (this.tables.get(table) ?? []).map((line) => Number(line.split('\t')[2]));
  }
}

const usage = { input: 10, cachedInput: 0, cacheWrite: 0, output: 5, reasoning: 0 };
const base = (position: number) => ({
  globalPosition: position, transactionId: 100n + BigInt(position), streamId: `request-r${position}`, streamVersion: 1,
  eventId: `e${position}`, schemaVersion: 1, metadata: {}, recordedAt: new Date('2026-03-04T05:06:07Z'),
});
const who = (position: number) => ({ requestId: `r${position}`, tenantId: 'acme', keyId: 'app', alias: 'chat', deploymentId: 'primary', providerId: 'p', model: 'm' });

function attempt(position: number): RecordedEvent {
  return {
    ...base(position), type: 'AttemptFinished',
    data: {
      ...who(position), attempt: 1, outcome: 'success', errorClass: null, httpStatus: 200, usage, usageEvidence: 'provider',
      cost: { input: '0.00001', cachedInput: '0', cacheWrite: '0', output: '0.00002', total: '0.00003', currency: 'USD' },
      priceVersion: 1, latencyMs: 12, ttftMs: null, providerRequestId: null, routing: { strategy: 'priority', candidates: ['primary'], reason: 'first' },
    },
  } as RecordedEvent;
}

function cacheHit(position: number): RecordedEvent {
  return {
    ...base(position), type: 'RequestServedFromCache',
    data: { ...who(position), aliasVersion: 1, sourceRequestId: 'r1', priceVersion: 1, usage, savedCostUsd: '0.00003' },
  } as RecordedEvent;
}

describe('ClickHouse analytics: one high-water mark per raw table', () => {
  const batch = [attempt(1), cacheHit(2), attempt(3), cacheHit(4)];
  const noSql = {} as SqlExecutor;
  const make = () => {
    const clickhouse = new MemoryClickHouse();
    return { clickhouse, projection: new ClickHouseAnalyticsProjection(clickhouse as unknown as ClickHouseConnection) };
  };

  test('a batch goes to both tables, each event once', async () => {
    const { clickhouse, projection } = make();
    await projection.handle(noSql, batch);
    expect(clickhouse.positions('attempts')).toEqual([1, 3]);
    expect(clickhouse.positions('cache_hits')).toEqual([2, 4]);
    const line = clickhouse.tables.get('cache_hits')![0].split('\t');
    expect(line.slice(-7)).toEqual(['0', '0', '0', '0', '0', '0.000000000000', '0.000030000000']);
  });

  test.each([
    ['before the cache-hit insert applied', false],
    ['after the cache-hit insert applied (its answer lost)', true],
  ])('a failure between the two inserts, %s, is replayed without counting anything twice or losing anything', async (_case, applied) => {
    const { clickhouse, projection } = make();
    clickhouse.failNext = { table: 'cache_hits', applied };
    await expect(projection.handle(noSql, batch)).rejects.toThrow('connection reset');
    // The checkpoint did not move: the runner hands the same batch again (to this writer or the next).
    await projection.handle(noSql, batch);
    expect(clickhouse.positions('attempts')).toEqual([1, 3]);
    expect(clickhouse.positions('cache_hits')).toEqual([2, 4]);
  });

  test('a new writer (marks read from ClickHouse) skips what each table already holds, table by table', async () => {
    const { clickhouse, projection } = make();
    await projection.handle(noSql, [attempt(1), cacheHit(2), attempt(3)]);
    const next = new ClickHouseAnalyticsProjection(clickhouse as unknown as ClickHouseConnection);
    // From an older checkpoint: the attempts' mark (3) is past the cache hit at 2 — which is in, by its own mark.
    await next.handle(noSql, [cacheHit(2), attempt(3), cacheHit(4), attempt(5)]);
    expect(clickhouse.positions('attempts')).toEqual([1, 3, 5]);
    expect(clickhouse.positions('cache_hits')).toEqual([2, 4]);
  });
});
