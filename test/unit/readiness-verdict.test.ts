import { type DependencyCheck, readinessVerdict } from '../../modules/observability/readiness.js';

const ok: DependencyCheck = { status: 'ok', required: false };
const absent: DependencyCheck = { status: 'not_configured', required: false };
const reachable = { reachable: true, problems: [] };
const lag = (name: string, kind: 'in-memory' | 'durable', behind: number, lastError: string | null = null) => ({ name, kind, behind, lastError });

describe('readinessVerdict', () => {
  test('ready when the event store answers and the in-memory projections are current', () => {
    const report = readinessVerdict({ eventStore: reachable, lags: [lag('routing-snapshot', 'in-memory', 0)], redis: ok, clickhouse: absent, maxLagEvents: 10 });
    expect(report).toMatchObject({ ready: true, problems: [], checks: { eventStore: { status: 'ok' }, projections: { status: 'ok' }, redis: { status: 'ok' }, clickhouse: { status: 'not_configured' } } });
  });

  test('an unreachable event store makes the node unready and names itself', () => {
    const report = readinessVerdict({ eventStore: { reachable: false, problems: ['queries: connection refused'] }, lags: null, redis: absent, clickhouse: absent, maxLagEvents: 10 });
    expect(report.ready).toBe(false);
    expect(report.checks.eventStore.status).toBe('failing');
    expect(report.checks.projections.status).toBe('failing');
    expect(report.problems).toEqual(['queries: connection refused']);
  });

  test('an in-memory projection beyond the lag bound makes the node unready; a lagging durable one does not', () => {
    const stale = readinessVerdict({ eventStore: reachable, lags: [lag('key-index', 'in-memory', 11), lag('cost-ledger', 'durable', 5_000)], redis: absent, clickhouse: absent, maxLagEvents: 10 });
    expect(stale.ready).toBe(false);
    expect(stale.checks.projections).toMatchObject({ status: 'failing', detail: 'key-index' });
    expect(stale.problems).toEqual(['projection key-index: 11 events behind (more than 10)']);
    const atBound = readinessVerdict({ eventStore: reachable, lags: [lag('key-index', 'in-memory', 10), lag('cost-ledger', 'durable', 5_000)], redis: absent, clickhouse: absent, maxLagEvents: 10 });
    expect(atBound.ready).toBe(true);
  });

  test('Redis or ClickHouse failing is named but leaves the node ready (local limits; analytics catch up)', () => {
    const failing: DependencyCheck = { status: 'failing', required: false, detail: 'not answering' };
    const report = readinessVerdict({ eventStore: reachable, lags: [lag('clickhouse-analytics', 'durable', 3, 'connect ECONNREFUSED')], redis: failing, clickhouse: failing, maxLagEvents: 10 });
    expect(report.ready).toBe(true);
    expect(report.problems).toEqual([
      'projection clickhouse-analytics: failing, retrying',
      'redis: not answering (limits and breakers are local meanwhile)',
      'clickhouse: not answering (analytics catch up when it returns)',
    ]);
  });
});

describe('readinessVerdict with a halted durable projection', () => {
  const halt = {
    name: 'cost-ledger', position: { transactionId: 812n, globalPosition: 4_711 }, eventId: '0192f1e2-0000-7000-8000-000000000001', eventType: 'AttemptFinished',
    error: 'value "100000000000…(309 digits)" is out of range for type bigint', errorCode: '22003', haltedAt: new Date('2026-12-01T10:00:00Z'),
  };

  test('names the projection, the position, the event, its type and the error, and the node stays ready (serving does not depend on it)', () => {
    const report = readinessVerdict({ eventStore: reachable, lags: [lag('cost-ledger', 'durable', 900)], halted: [halt], redis: absent, clickhouse: absent, maxLagEvents: 10 });
    expect(report.ready).toBe(true);
    const named = 'cost-ledger halted at global position 4711 (event 0192f1e2-0000-7000-8000-000000000001, AttemptFinished) since 2026-12-01T10:00:00.000Z: ' +
      'value "100000000000…(309 digits)" is out of range for type bigint [22003]';
    expect(report.checks.durableProjections).toEqual({ status: 'failing', required: false, detail: named });
    expect(report.problems).toEqual([`projection cost-ledger: ${named.slice('cost-ledger '.length)} — its read model stops there, serving continues; fix the cause and run \`switchyard projections resume cost-ledger\``]);
    expect(report.halted).toEqual([halt]);
  });

  test('without one the check is ok', () => {
    const report = readinessVerdict({ eventStore: reachable, lags: [], redis: absent, clickhouse: absent, maxLagEvents: 10 });
    expect(report.checks.durableProjections).toEqual({ status: 'ok', required: false });
    expect(report.halted).toEqual([]);
  });
});

describe('readinessVerdict with an outage spool', () => {
  const down = { reachable: false, problems: ['queries: connection refused'] };
  test('an unreachable event store absorbed by a spool with room leaves the node ready, and says so', () => {
    const report = readinessVerdict({ eventStore: down, lags: null, redis: absent, clickhouse: absent, maxLagEvents: 10, spool: { bytes: 4_096, maxBytes: 1_048_576, full: false } });
    expect(report.ready).toBe(true);
    expect(report.checks.eventStore).toMatchObject({ status: 'failing', required: false });
    expect(report.checks.projections).toMatchObject({ status: 'failing', required: false });
    expect(report.problems).toContain('event store unreachable: serving from the routing snapshot, request events spooled locally (4096 of 1048576 bytes)');
  });

  test('without a spool (PGlite, SWITCHYARD_SPOOL_MAX_BYTES=0) an unreachable event store makes the node unready', () => {
    const report = readinessVerdict({ eventStore: down, lags: null, redis: absent, clickhouse: absent, maxLagEvents: 10, spool: null });
    expect(report.ready).toBe(false);
    expect(report.checks.eventStore).toMatchObject({ status: 'failing', required: true, detail: 'not reachable' });
  });

  test('a full spool makes the node unready', () => {
    const report = readinessVerdict({ eventStore: down, lags: null, redis: absent, clickhouse: absent, maxLagEvents: 10, spool: { bytes: 1_048_576, maxBytes: 1_048_576, full: true } });
    expect(report.ready).toBe(false);
    expect(report.problems).toContain('event store unreachable and the outage spool is full (1048576 bytes): requests are refused');
  });

  test('a spool short of its bound that refused the last append is full: the node refuses requests, so it is unready', () => {
    const report = readinessVerdict({ eventStore: down, lags: null, redis: absent, clickhouse: absent, maxLagEvents: 10, spool: { bytes: 5_400, maxBytes: 6_000, full: true } });
    expect(report.ready).toBe(false);
    expect(report.checks.eventStore).toMatchObject({ status: 'failing', required: true, detail: 'not reachable; the outage spool is full' });
  });

  test('the store back but a full spool still draining its backlog: unready until it has room; a full flag over an empty spool is not', () => {
    const draining = readinessVerdict({ eventStore: reachable, lags: [], redis: absent, clickhouse: absent, maxLagEvents: 10, spool: { bytes: 5_400, maxBytes: 6_000, full: true } });
    expect(draining.ready).toBe(false);
    expect(draining.problems).toEqual(['the outage spool is full (6000 bytes) and draining: requests are refused until it has room']);
    // Nothing spooled: appends go to the store directly, whatever the spool refused last.
    const empty = readinessVerdict({ eventStore: reachable, lags: [], redis: absent, clickhouse: absent, maxLagEvents: 10, spool: { bytes: 0, maxBytes: 6_000, full: true } });
    expect(empty).toMatchObject({ ready: true, problems: [] });
  });

  test('a reachable event store is unaffected by the spool', () => {
    const report = readinessVerdict({ eventStore: reachable, lags: [], redis: absent, clickhouse: absent, maxLagEvents: 10, spool: { bytes: 0, maxBytes: 1_048_576, full: false } });
    expect(report).toMatchObject({ ready: true, problems: [] });
  });
});
