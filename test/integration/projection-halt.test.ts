import { Logger, type LoggerService } from '@nestjs/common';
import { AuditChainProjection } from '../../projections/audit-chain/audit-chain.projection.js';
import { ClickHouseAnalyticsProjection } from '../../projections/clickhouse-analytics/clickhouse-analytics.projection.js';
import { ClickHouseConnection } from '../../projections/clickhouse-analytics/clickhouse-connection.js';
import { clickHouseSettings } from '../../projections/clickhouse-analytics/clickhouse-settings.js';
import { CostLedgerProjection } from '../../projections/cost-ledger/cost-ledger.projection.js';
import type { SqlExecutor } from '../../src/kernel/database/database.js';
import type { RecordedEvent } from '../../src/kernel/event-store/event-store.js';
import { SqlEventStore } from '../../src/kernel/event-store/sql-event-store.js';
import { projectionCheckpoints } from '../../src/kernel/projections/projection-checkpoints.js';
import { projectionHalts } from '../../src/kernel/projections/projection-halts.js';
import { ProjectionHaltedError, ProjectionRunner, RebuildFailedError } from '../../src/kernel/projections/projection-runner.js';
import { type ScratchClickHouse, scratchClickHouse } from '../support/clickhouse.js';
import { type StoreFixture, openStore } from '../support/event-store-targets.js';
import { type AttemptData, POISONED_USAGE, appendAll, attemptFinished } from '../support/ledger-events.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const baseUrl = requireService('DATABASE_URL');
const clickhouseUrl = baseUrl ? requireService('CLICKHOUSE_URL') : null;
const describeWithPostgres = baseUrl ? describe : describe.skip;
const describeWithClickHouse = baseUrl && clickhouseUrl ? describe : describe.skip;

/** Every line the runner logs, by level (Nest's logger, replaced for this suite). */
const logged: Array<{ level: string; message: string }> = [];
const capture = (level: string) => (message: unknown) => void logged.push({ level, message: String(message) });
Logger.overrideLogger({ log: capture('log'), error: capture('error'), warn: capture('warn'), debug: () => undefined, verbose: () => undefined } satisfies LoggerService);
const haltLines = (name: string) => logged.filter((line) => line.level === 'error' && line.message.startsWith(`${name} halted at global position`));

/** The ledger, counting the pages handed to it (a retry loop would show here). */
class CountingLedger extends CostLedgerProjection {
  pages = 0;
  override async handle(manager: SqlExecutor, events: readonly RecordedEvent[]): Promise<void> {
    this.pages++;
    await super.handle(manager, events);
  }
}

/**
 * A store whose upcaster can be switched to repair the poisoned event, as an upgrade that ships an upcaster
 * for it would: the stored event never changes, readers see it repaired (2e9 input tokens instead of 1e308).
 */
function repairableStore(fixture: StoreFixture): { store: SqlEventStore; repair: (on: boolean) => void } {
  let repairing = false;
  const store = new SqlEventStore(fixture.database, (type, schemaVersion, data) => {
    const attempt = data as AttemptData;
    if (!repairing || type !== 'AttemptFinished' || attempt.usage.input < POISONED_USAGE) return { schemaVersion, data };
    return { schemaVersion, data: { ...attempt, usage: { ...attempt.usage, input: 2_000_000_000 } } };
  });
  return { store, repair: (on) => (repairing = on) };
}

async function waitFor(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  for (const started = Date.now(); !(await probe()); ) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The ledger and tenant spend as stored, in a stable order (money as text, every column). */
async function ledgerSnapshot(database: SqlExecutor): Promise<{ ledger: unknown[]; spend: unknown[] }> {
  return {
    ledger: await database.query(`SELECT *, cost_usd::text AS cost_usd, saved_usd::text AS saved_usd FROM cost_ledger ORDER BY request_id, attempt`),
    spend: await database.query(`SELECT tenant_id, period, period_start, spent_usd::text AS spent_usd, saved_usd::text AS saved_usd FROM tenant_spend ORDER BY 1, 2, 3`),
  };
}

async function count(database: SqlExecutor, sql: string): Promise<number> {
  const [row] = await database.query<{ n: string }>(sql);
  return Number(row.n);
}

/** 3,000 good attempts with a poisoned one (1e308 input tokens) at index 1,233: in the middle of the ledger's third page of 500. */
const BEFORE = 1_233;
const TOTAL = 3_000;
async function appendWithPoison(store: SqlEventStore, from = 1): Promise<{ positions: number[]; poison: number }> {
  const requests = [];
  for (let i = 0; i < TOTAL; i++) {
    requests.push(i === BEFORE ? attemptFinished(from + i, (data) => (data.usage.input = POISONED_USAGE)) : attemptFinished(from + i));
  }
  const positions = await appendAll(store, requests);
  return { positions, poison: positions[BEFORE] };
}

describeWithPostgres('a durable projection that meets an event it cannot apply (issue 32)', () => {
  let scratch: { url: string; drop: () => Promise<void> };
  let fixture: StoreFixture;
  let runner: ProjectionRunner | null = null;

  beforeEach(async () => {
    logged.length = 0;
    scratch = await createScratchDatabase(baseUrl!);
    fixture = await openStore(scratch.url);
  });
  afterEach(async () => {
    await runner?.stop();
    runner = null;
    await fixture.close();
    await scratch.drop();
  });

  const start = async (store: SqlEventStore) => {
    const ledger = new CountingLedger();
    runner = new ProjectionRunner(store, fixture.database, { pollIntervalMs: 100, listen: true, batchSize: 500, runDurable: true });
    runner.addDurable(ledger);
    runner.addDurable(new AuditChainProjection(null, 0));
    await runner.start();
    const status = () => runner!.status().find((s) => s.name === 'cost-ledger')!;
    return { ledger, status, runner };
  };

  test('the ledger applies every event before the bad one, halts at it once and loudly, the audit chain keeps moving, and resume works once the cause is gone', async () => {
    const { store, repair } = repairableStore(fixture);
    const db = fixture.database;
    const { positions, poison } = await appendWithPoison(store);
    const { ledger, status } = await start(store);
    await waitFor('the ledger halting', () => status().halted !== null);

    // Halted at the poisoned event, naming it and the error; every event before it is in the ledger, none after.
    const halt = status().halted!;
    const [poisoned] = await db.query<{ event_id: string }>(`SELECT event_id::text AS event_id FROM events WHERE global_position = $1`, [poison]);
    expect(halt).toMatchObject({ name: 'cost-ledger', eventId: poisoned.event_id, eventType: 'AttemptFinished', errorCode: '22003' });
    expect(halt.position.globalPosition).toBe(poison);
    // PostgreSQL's words, the 309 digits of the value shortened (they are not a secret, and not readable either).
    expect(halt.error).toBe('value "100000000000…(309 digits)" is out of range for type bigint');
    expect(await count(db, `SELECT count(*)::text AS n FROM cost_ledger`)).toBe(BEFORE);
    expect(await count(db, `SELECT max(global_position)::text AS n FROM cost_ledger`)).toBe(positions[BEFORE - 1]);
    expect((await projectionCheckpoints.load(db, 'cost-ledger')).globalPosition).toBe(positions[BEFORE - 1]);
    const [spendAgrees] = await db.query<{ ok: boolean }>(
      `SELECT (SELECT sum(cost_usd) FROM cost_ledger) = (SELECT sum(spent_usd) FROM tenant_spend WHERE period = 'month') AS ok`);
    expect(spendAgrees.ok).toBe(true);
    // Recorded for every process to see.
    expect(await projectionHalts.load(db, 'cost-ledger')).toEqual(halt);
    expect(haltLines('cost-ledger')).toHaveLength(1);
    expect(haltLines('cost-ledger')[0].message).toContain(`(event ${poisoned.event_id}, AttemptFinished)`);
    expect(haltLines('cost-ledger')[0].message).toContain('switchyard projections resume cost-ledger');

    // The audit chain follows every event: it is not held back.
    await runner!.catchUp(['audit-chain']);
    expect(await count(db, `SELECT count(*)::text AS n FROM audit_chain`)).toBe(TOTAL);
    await expect(runner!.catchUp(['cost-ledger'])).rejects.toThrow(ProjectionHaltedError);

    // No retry loop: more events, commit notifications and thirty polls later, the ledger was handed no page again.
    const pages = ledger.pages;
    await appendAll(store, Array.from({ length: 20 }, (_, i) => attemptFinished(10_000 + i)));
    await sleep(3_000);
    expect(ledger.pages).toBe(pages);
    expect(haltLines('cost-ledger')).toHaveLength(1);
    expect(logged.filter((line) => line.message.includes('retrying'))).toEqual([]);
    await runner!.catchUp(['audit-chain']);
    expect(await count(db, `SELECT count(*)::text AS n FROM audit_chain`)).toBe(TOTAL + 20);
    const lag = (await runner!.lag(1_000_000)).find((l) => l.name === 'cost-ledger')!;
    expect(lag.behind).toBe(TOTAL - BEFORE + 20);

    // Resumed with the cause still there: it tries the event once more and halts again — once.
    expect(await runner!.resume('cost-ledger')).toBe(true);
    await waitFor('the ledger halting again', () => status().halted !== null && status().halted!.haltedAt > halt.haltedAt);
    expect(haltLines('cost-ledger')).toHaveLength(2);
    expect(ledger.pages - pages).toBeLessThanOrEqual(2 + Math.ceil(Math.log2(500))); // the page, then halves down to the event
    expect(status().halted!.position.globalPosition).toBe(poison);
    expect(await count(db, `SELECT count(*)::text AS n FROM cost_ledger`)).toBe(BEFORE);

    // An upgrade repairs the event (an upcaster): resumed, the ledger applies it and everything after it.
    repair(true);
    expect(await runner!.resume('cost-ledger')).toBe(true);
    await runner!.catchUp(['cost-ledger']);
    expect(status().halted).toBeNull();
    expect(await projectionHalts.load(db, 'cost-ledger')).toBeNull();
    expect(await count(db, `SELECT count(*)::text AS n FROM cost_ledger`)).toBe(TOTAL + 20);
    const [repaired] = await db.query<{ input_tokens: string }>(`SELECT input_tokens FROM cost_ledger WHERE global_position = $1`, [poison]);
    expect(repaired.input_tokens).toBe('2000000000');
    expect(haltLines('cost-ledger')).toHaveLength(2);
  }, 120_000);

  test('a rebuild that meets the bad event leaves the ledger exactly as it was; once repaired, a rebuild (also while events arrive) swaps in rows equal to the live ones', async () => {
    const { store, repair } = repairableStore(fixture);
    const db = fixture.database;
    const { poison } = await appendWithPoison(store);
    const { status } = await start(store);
    await waitFor('the ledger halting', () => status().halted !== null);
    const before = await ledgerSnapshot(db);
    expect(before.ledger).toHaveLength(BEFORE);

    const failure = await runner!.rebuild('cost-ledger').then(() => null, (error: unknown) => error);
    expect(failure).toBeInstanceOf(RebuildFailedError);
    expect((failure as RebuildFailedError).failedAt).toMatchObject({ globalPosition: poison, eventType: 'AttemptFinished' });
    expect((failure as RebuildFailedError).message).toMatch(new RegExp(`failed at global position ${poison} .*out of range for type bigint.*the live read model is untouched`));
    // Row for row as it was; the rebuild's schema is gone; the projection is still halted at the same event.
    expect(await ledgerSnapshot(db)).toEqual(before);
    expect(await count(db, `SELECT count(*)::text AS n FROM pg_namespace WHERE nspname LIKE 'switchyard_rebuild%'`)).toBe(0);
    expect(status().rebuild).toMatchObject({ state: 'failed', failedAt: { globalPosition: poison } });
    expect(status().halted?.position.globalPosition).toBe(poison);
    expect(await projectionHalts.load(db, 'cost-ledger')).not.toBeNull();

    // Repaired: a rebuild replays past the event while more attempts arrive, and swaps in at the head; the halt is over.
    repair(true);
    const arriving = (async () => {
      for (let batch = 0; batch < 10; batch++) {
        await appendAll(store, Array.from({ length: 30 }, (_, i) => attemptFinished(20_000 + batch * 30 + i)));
        await sleep(20);
      }
    })();
    const [rebuilt] = await Promise.all([runner!.rebuild('cost-ledger'), arriving]);
    expect(rebuilt.state).toBe('done');
    expect(status().halted).toBeNull();
    expect(await projectionHalts.load(db, 'cost-ledger')).toBeNull();
    await runner!.catchUp(['cost-ledger']);
    const live = await ledgerSnapshot(db);
    expect(live.ledger).toHaveLength(TOTAL + 300);
    // What was there before the rebuild is still there, unchanged.
    const byKey = new Map((live.ledger as Array<Record<string, unknown>>).map((row) => [`${row.request_id}#${row.attempt}`, row]));
    for (const row of before.ledger as Array<Record<string, unknown>>) expect(byKey.get(`${row.request_id}#${row.attempt}`)).toEqual(row);

    // A quiet rebuild reproduces the live read model exactly: the swap finds nothing to change, and the rows are equal.
    const quiet = await runner!.rebuild('cost-ledger');
    expect(quiet.replaced).toEqual([{ table: 'cost_ledger', removed: 0, added: 0 }, { table: 'tenant_spend', removed: 0, added: 0 }]);
    expect(await ledgerSnapshot(db)).toEqual(live);
    const [sums] = await db.query<{ ledger: string; month: string; day: string }>(
      `SELECT (SELECT sum(cost_usd) FROM cost_ledger)::text AS ledger, (SELECT sum(spent_usd) FROM tenant_spend WHERE period = 'month')::text AS month,
              (SELECT sum(spent_usd) FROM tenant_spend WHERE period = 'day')::text AS day`);
    expect(sums.month).toBe(sums.ledger);
    expect(sums.day).toBe(sums.ledger);
    expect(await count(db, `SELECT count(*)::text AS n FROM pg_namespace WHERE nspname LIKE 'switchyard_rebuild%'`)).toBe(0);
  }, 120_000);

  test('usage beyond 32 bits and costs of millions are stored exactly and summed exactly into tenant spend', async () => {
    const db = fixture.database;
    const store = new SqlEventStore(db);
    await appendAll(store, [
      attemptFinished(3, (data) => {
        data.usage.input = 2_000_000_000;
        data.usage.output = 3_000_000_000;
        data.cost.total = '1000000.000000000001';
      }),
      attemptFinished(6, (data) => {
        data.usage.cachedInput = 4_294_967_296;
        data.cost.total = '999999.999999999999';
      }),
    ]);
    await start(store);
    await runner!.catchUp(['cost-ledger']);
    const rows = await db.query<Record<string, string>>(
      `SELECT request_id, input_tokens::text AS input, output_tokens::text AS output, cached_input_tokens::text AS cached, cost_usd::text AS cost
       FROM cost_ledger ORDER BY request_id`);
    expect(rows).toEqual([
      { request_id: 'r000003', input: '2000000000', output: '3000000000', cached: '3', cost: '1000000.000000000001' },
      { request_id: 'r000006', input: '106', output: '26', cached: '4294967296', cost: '999999.999999999999' },
    ]);
    const spend = await db.query<{ period: string; spent: string }>(`SELECT period, spent_usd::text AS spent FROM tenant_spend WHERE tenant_id = 'globex' ORDER BY period`);
    expect(spend).toEqual([{ period: 'day', spent: '2000000.000000000000' }, { period: 'month', spent: '2000000.000000000000' }]);
    expect(runner!.status().find((s) => s.name === 'cost-ledger')!.halted).toBeNull();
  }, 60_000);
});

describeWithClickHouse('ClickHouse analytics that meets an event it cannot insert (issue 32)', () => {
  let scratch: { url: string; drop: () => Promise<void> };
  let fixture: StoreFixture;
  let ch: ScratchClickHouse;
  let connection: ClickHouseConnection;
  let runner: ProjectionRunner | null = null;

  beforeEach(async () => {
    logged.length = 0;
    scratch = await createScratchDatabase(baseUrl!);
    fixture = await openStore(scratch.url);
    ch = scratchClickHouse(clickhouseUrl!);
    connection = new ClickHouseConnection(clickHouseSettings(ch.url));
  });
  afterEach(async () => {
    await runner?.stop();
    runner = null;
    await connection.close();
    await ch.drop();
    await fixture.close();
    await scratch.drop();
  });

  /** Raw rows and both rollups, aggregated so that unmerged parts do not matter. */
  const snapshot = async () => ({
    attempts: await ch.rows(`SELECT request_id, attempt, input_tokens, output_tokens, toString(cost_usd) AS cost, global_position FROM ${ch.database}.attempts ORDER BY request_id, attempt`),
    hourly: await ch.rows(`SELECT toString(hour) AS h, tenant_id, toString(sum(attempts)) AS n, toString(sum(input_tokens)) AS input, toString(sum(cost_usd)) AS cost
      FROM ${ch.database}.spend_hourly GROUP BY hour, tenant_id ORDER BY h, tenant_id`),
    daily: await ch.rows(`SELECT toString(day) AS d, tenant_id, toString(sum(attempts)) AS n, toString(sum(input_tokens)) AS input, toString(sum(cost_usd)) AS cost
      FROM ${ch.database}.spend_daily GROUP BY day, tenant_id ORDER BY d, tenant_id`),
  });
  const asideTables = async () => (await ch.rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = '${ch.database}' ORDER BY name`))
    .map((row) => row.name).filter((name) => name.includes('__'));

  test('halts at the event, holds 64-bit counts and costs of millions exactly, and a rebuild never ends with fewer rows than before', async () => {
    const { store, repair } = repairableStore(fixture);
    const { poison } = await appendWithPoison(store);
    await appendAll(store, [attemptFinished(90_000, (data) => {
      data.usage.input = 3_000_000_000;
      data.cost.total = '1000000.000000000001';
    })]);
    const analytics = new ClickHouseAnalyticsProjection(connection);
    runner = new ProjectionRunner(store, fixture.database, { pollIntervalMs: 100, listen: true, batchSize: 500, runDurable: true });
    runner.addDurable(analytics);
    await runner.start();
    const status = () => runner!.status().find((s) => s.name === 'clickhouse-analytics')!;
    await waitFor('the analytics halting', () => status().halted !== null, 60_000);
    expect(status().halted).toMatchObject({ eventType: 'AttemptFinished', errorCode: '27' });
    expect(status().halted!.position.globalPosition).toBe(poison);
    expect(haltLines('clickhouse-analytics')).toHaveLength(1);
    const halted = await snapshot();
    expect(halted.attempts).toHaveLength(BEFORE);
    expect(Math.max(...halted.attempts.map((row: any) => Number(row.global_position)))).toBeLessThan(poison);

    // A rebuild meets the same event: the live tables are as they were, and nothing of the rebuild is left.
    await expect(runner.rebuild('clickhouse-analytics')).rejects.toThrow(RebuildFailedError);
    expect(await snapshot()).toEqual(halted);
    expect(await asideTables()).toEqual([]);

    // Repaired and resumed: past the event, the 3e9 tokens and the million dollars exactly.
    repair(true);
    await runner.resume('clickhouse-analytics');
    // The rollups too: ClickHouse writes an insert's block to the table, then to its materialized views, so a count
    // of the table can be complete while a view's rows of the same insert are still on their way.
    const counted = async (table: string, count: string) => Number((await ch.rows(`SELECT toString(${count}) AS n FROM ${ch.database}.${table}`))[0].n);
    await waitFor('the analytics catching up', async () => (await counted('attempts', 'count()')) === TOTAL + 1
      && (await counted('spend_hourly', 'sum(attempts)')) === TOTAL + 1 && (await counted('spend_daily', 'sum(attempts)')) === TOTAL + 1, 60_000);
    const [big] = await ch.rows(`SELECT input_tokens, toString(cost_usd) AS cost FROM ${ch.database}.attempts WHERE request_id = 'r090000'`);
    expect(big).toEqual({ input_tokens: '3000000000', cost: '1000000.000000000001' });
    const [repaired] = await ch.rows(`SELECT input_tokens FROM ${ch.database}.attempts WHERE global_position = ${poison}`);
    expect(repaired.input_tokens).toBe('2000000000');
    const live = await snapshot();

    // A rebuild now swaps in tables equal to the live ones, rollups included.
    const rebuilt = await runner.rebuild('clickhouse-analytics');
    expect(rebuilt.state).toBe('done');
    expect(await snapshot()).toEqual(live);
    expect(await asideTables()).toEqual([]);
    // And the live writer goes on into the swapped-in tables (their views included).
    await appendAll(store, [attemptFinished(90_001)]);
    await waitFor('the next attempt reaching the rollups', async () =>
      Number((await ch.rows(`SELECT toString(sum(attempts)) AS n FROM ${ch.database}.spend_daily`))[0].n) === TOTAL + 2, 30_000);
    expect(status().halted).toBeNull();
  }, 180_000);
});
