import { AdminClient } from '../support/admin-client.js';
import { runCli } from '../support/cli-process.js';
import { type TestGateway, postJson, startTestGateway } from '../support/gateway-harness.js';
import { poisonedAttempt } from '../support/ledger-events.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'sy-admin-projection-halt-surfaces-0123456789';

/** The value of one series of a scrape, or null when it is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | null {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return null;
}

/**
 * Issue 32: a poisoned AttemptFinished in the log of a running gateway. The ledger halts at it and says so
 * everywhere an operator looks — the status API, /metrics, /readyz (which stays 200: serving goes on), the
 * CLI's `projections status` from another process — while the audit chain and serving carry on; a resume
 * from another process while the cause is still there halts it again (once), and a rebuild fails without
 * touching the ledger.
 */
describeWithPostgres('a halted projection on a running gateway', () => {
  let scratch: { url: string; drop: () => Promise<void> };
  let gw: TestGateway;
  let admin: AdminClient;
  let poison: number;
  let poisonId: string;
  const env = () => ({ ...process.env, DATABASE_URL: scratch.url, LOG_LEVEL: 'error', CLICKHOUSE_URL: '', REDIS_URL: '' });
  const chat = async (n: number) => {
    for (let i = 0; i < n; i++) expect((await postJson(gw, '/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: `hello ${i}` }] })).status).toBe(200);
  };
  const ledgerStatus = () => gw.gateway.platform.runner.status().find((s) => s.name === 'cost-ledger')!;
  const ledgerRows = () => gw.gateway.platform.database.query(`SELECT *, cost_usd::text AS cost_usd FROM cost_ledger ORDER BY request_id, attempt`);

  beforeAll(async () => {
    scratch = await createScratchDatabase(baseUrl!);
    gw = await startTestGateway({ databaseUrl: scratch.url, environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    await chat(5);
    const appended = await gw.gateway.platform.store.append(poisonedAttempt(1));
    poison = appended.positions[0];
    const [row] = await gw.gateway.platform.database.query<{ event_id: string }>(`SELECT event_id::text AS event_id FROM events WHERE global_position = $1`, [poison]);
    poisonId = row.event_id;
    await chat(3);
    for (const started = Date.now(); !ledgerStatus().halted; await new Promise((resolve) => setTimeout(resolve, 50))) {
      if (Date.now() - started > 20_000) throw new Error('the ledger did not halt');
    }
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await scratch?.drop();
  });

  test('the status API, the metric and /readyz name the projection, the position, the event and the error; the node stays ready', async () => {
    const status = await admin.get('/status');
    expect(status.status).toBe(200);
    const projections = new Map(status.json.projections.map((p: { name: string }) => [p.name, p]));
    expect(projections.get('cost-ledger')).toMatchObject({
      kind: 'durable',
      halted: { globalPosition: poison, eventId: poisonId, eventType: 'AttemptFinished', errorCode: '22003', error: expect.stringMatching(/out of range for type bigint/) },
    });
    expect(projections.get('audit-chain')).toMatchObject({ halted: null });
    expect(status.json.ready).toBe(true);

    const metrics = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text());
    expect(metrics).toContain('# TYPE switchyard_projection_halted gauge');
    expect(sample(metrics, 'switchyard_projection_halted', { projection: 'cost-ledger' })).toBe(1);
    expect(sample(metrics, 'switchyard_projection_halted', { projection: 'audit-chain' })).toBe(0);

    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    const body: any = await ready.json();
    expect(body.status).toBe('ready');
    expect(body.checks.durableProjections).toMatchObject({ status: 'failing', required: false });
    expect(body.checks.durableProjections.detail).toContain(`cost-ledger halted at global position ${poison} (event ${poisonId}, AttemptFinished)`);
    expect(body.checks.durableProjections.detail).toMatch(/out of range for type bigint/);
    expect(body.problems.some((problem: string) => problem.startsWith(`projection cost-ledger: halted at global position ${poison}`))).toBe(true);
    expect(body.halted).toEqual([expect.objectContaining({ name: 'cost-ledger', globalPosition: poison, eventId: poisonId, eventType: 'AttemptFinished' })]);
  });

  test('serving, and the audit chain, carry on past the bad event', async () => {
    await chat(4);
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['audit-chain']);
    const [counts] = await gw.gateway.platform.database.query<{ events: string; chain: string }>(
      `SELECT (SELECT count(*) FROM events)::text AS events, (SELECT count(*) FROM audit_chain)::text AS chain`);
    expect(counts.chain).toBe(counts.events);
    expect(ledgerStatus().halted?.position.globalPosition).toBe(poison);
  });

  test('`projections status` from another process prints the halt: position, event, type, error and what to do', async () => {
    const human = await runCli(['projections', 'status'], env());
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^cost-ledger\\s+singleton\\s+\\d+\\s+\\d+\\s+HALTED at global position ${poison} \\(AttemptFinished\\)`, 'm'));
    expect(human.stdout).toContain(`cost-ledger HALTED at global position ${poison} (event ${poisonId}, AttemptFinished) since `);
    expect(human.stdout).toMatch(/out of range for type bigint.* \[22003\]/);
    expect(human.stdout).toContain('switchyard projections resume cost-ledger');
    const json = await runCli(['projections', 'status', '--json'], env());
    const row = JSON.parse(json.stdout).projections.find((p: { name: string }) => p.name === 'cost-ledger');
    expect(row).toMatchObject({ halted: { globalPosition: poison, eventId: poisonId, eventType: 'AttemptFinished', errorCode: '22003' } });
    expect(row.behind).toBeGreaterThan(0);
  }, 60_000);

  test('resume from another process, the cause still there: the gateway tries the event once more and halts again; so does the admin API', async () => {
    const before = ledgerStatus().halted!;
    const resumed = await runCli(['projections', 'resume', 'cost-ledger'], env());
    expect(resumed.code).toBe(1);
    expect(resumed.stdout).toContain(`cost-ledger halted again at global position ${poison} (event ${poisonId}, AttemptFinished)`);
    expect(ledgerStatus().halted!.haltedAt.getTime()).toBeGreaterThan(before.haltedAt.getTime());

    const api = await admin.post('/projections/cost-ledger/resume');
    expect(api.status).toBe(200);
    expect(api.json).toMatchObject({ projection: 'cost-ledger', state: 'halted-again', halt: { globalPosition: poison }, haltedAgain: { globalPosition: poison, eventId: poisonId } });
    expect((await admin.post('/projections/audit-chain/resume')).json).toMatchObject({ state: 'not-halted' });
    expect((await admin.post('/projections/nonsense/resume')).status).toBe(404);
  }, 90_000);

  test('a rebuild that meets the event fails, names it, and leaves the ledger as it was — from the CLI and through the admin API', async () => {
    const before = await ledgerRows();
    expect(before.length).toBeGreaterThan(0);
    const cli = await runCli(['projections', 'rebuild', 'cost-ledger'], env());
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`rebuilding cost-ledger failed at global position ${poison} (event ${poisonId}, AttemptFinished)`);
    expect(cli.stderr).toContain('the live read model is untouched');
    expect(await ledgerRows()).toEqual(before);

    const started = await admin.post('/projections/cost-ledger/rebuild');
    expect(started.status).toBe(202);
    for (const begun = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const row = (await admin.get('/projections')).json.projections.find((p: { name: string }) => p.name === 'cost-ledger');
      if (row.rebuild?.state === 'failed') {
        expect(row.rebuild.failedAt).toMatchObject({ globalPosition: poison, eventId: poisonId, eventType: 'AttemptFinished' });
        expect(row.detail).toContain(`last rebuild failed at global position ${poison}`);
        break;
      }
      if (Date.now() - begun > 30_000) throw new Error(`the rebuild did not fail: ${JSON.stringify(row)}`);
    }
    expect(await ledgerRows()).toEqual(before);
    expect(ledgerStatus().halted?.position.globalPosition).toBe(poison);
  }, 90_000);
});
