import { ClickHouseAnalyticsProjection } from '../../projections/clickhouse-analytics/clickhouse-analytics.projection.js';
import type { ClickHouseConnection } from '../../projections/clickhouse-analytics/clickhouse-connection.js';
import { classifyFailure, thrownByProjection } from '../../src/kernel/projections/projection-failure.js';
import { haltError } from '../../src/kernel/projections/projection-halts.js';

const sqlError = (code: string, message = 'failed') => Object.assign(new Error(message), { code });
const plain = {};

/**
 * Issue 32: which failures of a durable projection's page halt it at the event (deterministic: the same
 * events would fail the same way) and which it retries (transient).
 */
describe('classifyFailure', () => {
  test.each([
    ['22003', 'numeric value out of range'], ['22P02', 'invalid input syntax for type bigint'], ['23505', 'unique violation'],
    ['23514', 'check violation'], ['42P01', 'undefined table'], ['21000', 'cardinality violation'], ['54000', 'program limit exceeded'],
  ])('SQLSTATE %s (%s) is deterministic', (code) => {
    expect(classifyFailure(plain, sqlError(code))).toBe('deterministic');
  });

  test.each([
    ['08006', 'connection failure'], ['40001', 'serialization failure'], ['40P01', 'deadlock'], ['53100', 'disk full'], ['53300', 'too many connections'],
    ['55P03', 'lock not available'], ['57014', 'query cancelled'], ['57P01', 'admin shutdown'], ['58030', 'io error'], ['XX000', 'internal error'],
  ])('SQLSTATE %s (%s) is transient', (code) => {
    expect(classifyFailure(plain, sqlError(code))).toBe('transient');
  });

  test('a lost connection, a socket error or a stopped embedded engine is transient, even out of the projection', () => {
    expect(classifyFailure(plain, thrownByProjection(new Error('Connection terminated unexpectedly')))).toBe('transient');
    expect(classifyFailure(plain, thrownByProjection(sqlError('ECONNRESET')))).toBe('transient');
    expect(classifyFailure(plain, thrownByProjection(new Error("the embedded database's thread exited (code 1)")))).toBe('transient');
  });

  test("the projection's own errors are deterministic; the same error from elsewhere is not", () => {
    expect(classifyFailure(plain, thrownByProjection(new Error('[DecimalError] Invalid argument: not a number')))).toBe('deterministic');
    expect(classifyFailure(plain, new Error('[DecimalError] Invalid argument: not a number'))).toBe('transient');
  });

  test("a projection's own rule comes first", () => {
    expect(classifyFailure({ classify: () => 'transient' }, sqlError('22003'))).toBe('transient');
    expect(classifyFailure({ classify: () => undefined }, sqlError('22003'))).toBe('deterministic');
  });

  test("ClickHouse analytics: a refused insert's data errors halt, everything else is retried", () => {
    const analytics = new ClickHouseAnalyticsProjection({} as ClickHouseConnection);
    // What the client hands on for 18.16's answers (a plain error) is classified through the insert's wrapper only.
    expect(analytics.classify(new Error('Code: 27, e.displayText() = DB::Exception: Cannot parse input'))).toBe('transient');
    expect(analytics.classify(new Error('Timeout error.'))).toBe('transient');
  });

  test('ClickHouse analytics: an insert 18.16 refuses for its data (code 27) halts with the code; one refused for load (code 252) is retried', async () => {
    const refusing = (answer: string) => ({
      database: 'analytics', table: (name: string) => `analytics.${name}`, ensureDatabase: async () => undefined, command: async () => undefined,
      rows: async (query: string) => (query.includes('schema_migrations') ? [1, 2, 3, 4].map((v) => ({ version: String(v) })) : query.includes('system.processes') ? [{ running: '0' }] : []),
      insertTabSeparated: async () => {
        throw new Error(answer);
      },
    }) as unknown as ClickHouseConnection;
    const event = {
      globalPosition: 7, transactionId: 107n, streamId: 'request-r7', streamVersion: 1, eventId: 'e7', schemaVersion: 1, metadata: {}, recordedAt: new Date(), type: 'AttemptFinished',
      data: {
        requestId: 'r7', tenantId: 'acme', keyId: 'app', alias: 'chat', deploymentId: 'primary', providerId: 'p', model: 'm', attempt: 1, outcome: 'success',
        errorClass: null, httpStatus: 200, usage: { input: 1e308, cachedInput: 0, cacheWrite: 0, output: 1, reasoning: 0 }, usageEvidence: 'provider',
        cost: { input: '0', cachedInput: '0', cacheWrite: '0', output: '0', total: '0.1', currency: 'USD' }, priceVersion: 1, latencyMs: 1, ttftMs: null, providerRequestId: null,
      },
    };
    const failureOf = async (answer: string) => {
      const analytics = new ClickHouseAnalyticsProjection(refusing(answer));
      const error = await analytics.handle({ query: async () => [] }, [event]).then(() => null, (e: unknown) => e);
      return { error: error as Error & { code?: string }, kind: classifyFailure(analytics, error) };
    };
    const parse = await failureOf('Code: 27, e.displayText() = DB::Exception: Cannot parse input: expected \\t before: e+308');
    expect(parse.kind).toBe('deterministic');
    expect(parse.error.code).toBe('27');
    expect((await failureOf('Code: 252, e.displayText() = DB::Exception: Too many parts (300)')).kind).toBe('transient');
    // A current release's answer, as the client parses it.
    expect((await failureOf('Code: 27. DB::Exception: Cannot parse input')).kind).toBe('deterministic');
    // A cost that is not a number never reaches ClickHouse: the event itself is at fault.
    const malformed = new ClickHouseAnalyticsProjection(refusing('unused'));
    const notANumber = { ...event, data: { ...event.data, usage: { ...event.data.usage, input: 1 }, cost: { ...event.data.cost, total: 'twelve dollars' } } };
    const error = await malformed.handle({ query: async () => [] }, [notANumber]).then(() => null, (e: unknown) => e);
    expect(classifyFailure(malformed, error)).toBe('deterministic');
  });

  test('a halt keeps the value at fault readable: a long run of digits is shortened, not redacted', () => {
    const error = sqlError('22003', `value "1${'0'.repeat(308)}" is out of range for type bigint`);
    expect(haltError(error)).toBe('value "100000000000…(309 digits)" is out of range for type bigint');
  });
});
