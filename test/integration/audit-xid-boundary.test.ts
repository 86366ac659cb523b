import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { AuditVerifier } from '../../modules/audit/audit-verifier.js';
import { postJson, startTestGateway } from '../support/gateway-harness.js';
import { testPort } from '../support/port-range.js';

const BIN = '/usr/lib/postgresql/15/bin';
/** This suite's own port (port-range.ts). */
const PORT = testPort(710);
const canRun = existsSync(join(BIN, 'initdb')) && process.getuid?.() === 0;
if (!canRun) process.stderr.write('[skip] no PostgreSQL 15 binaries or not root: skipping the transaction-id boundary suite\n');
const describeWithServer = canRun ? describe : describe.skip;

const asPostgres = (command: string, args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, command), ...args], { stdio: 'pipe' });

/**
 * A fresh test database never reaches a digit boundary of transaction ids by itself, and xids compared
 * as text sort '1000000' before '999999'. This server starts just below one million, so the log, the
 * audit chain and the verifier all cross it.
 */
describeWithServer('audit chain across a transaction-id digit boundary (999,999 → 1,000,000)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-xid-'));
  const data = join(dir, 'data');
  const url = `postgres://postgres@127.0.0.1:${PORT}/postgres`;

  beforeAll(() => {
    chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    asPostgres('pg_resetwal', ['-x', '999700', '-D', data]);
    execFileSync('runuser', ['-u', 'postgres', '--', 'truncate', '-s', '262144', join(data, 'pg_xact', '0000')]);
    asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${PORT} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  }, 60_000);

  afterAll(() => {
    try {
      asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('events on both sides of the boundary are chained in xid8 order and verify', async () => {
    process.env.XID_SUITE_AUDIT_KEY = 'xid-suite-audit-key-0123456789abcdef0123';
    const gw = await startTestGateway({ databaseUrl: url, environment: { audit: { signingKeyRef: 'env:XID_SUITE_AUDIT_KEY', checkpointIntervalMs: 0 } } });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const currentXid = async () => BigInt((await client.query(`SELECT pg_current_xact_id()::text AS x`)).rows[0].x);
      expect(await currentXid()).toBeLessThan(1_000_000n);
      for (let i = 0; i < 400 && (await currentXid()) < 1_000_150n; i++) {
        expect((await postJson(gw, '/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: `xid ${i}` }] })).status).toBe(200);
      }
      await gw.gateway.platform.committer.drain();
      await gw.gateway.platform.runner.catchUp();
      const { rows: [sides] } = await client.query(
        `SELECT count(*) FILTER (WHERE transaction_id < '1000000'::xid8)::int AS below, count(*) FILTER (WHERE transaction_id >= '1000000'::xid8)::int AS above FROM events`,
      );
      expect(sides.below).toBeGreaterThan(0);
      expect(sides.above).toBeGreaterThan(0);
      // The chain follows the numeric order of transaction ids…
      const { rows: order } = await client.query(`SELECT c.global_position::int AS p FROM audit_chain c ORDER BY c.sequence`);
      const { rows: expected } = await client.query(`SELECT e.global_position::int AS p FROM events e ORDER BY e.transaction_id, e.global_position`);
      expect(order.map((r) => r.p)).toEqual(expected.map((r) => r.p));
      // …and the verifier, which recomputes from the table in xid8 order, agrees.
      const report = await new AuditVerifier(gw.gateway.platform.database, gw.gateway.platform.auditSigner).verify();
      expect(report.problem).toBeNull();
      expect(report.verifiedEvents).toBe(expected.length);
      // Every billable attempt of both sides reached the ledger.
      const { rows: [ledger] } = await client.query(`SELECT count(*)::int AS n FROM cost_ledger`);
      const { rows: [attempts] } = await client.query(`SELECT count(*)::int AS n FROM events WHERE event_type = 'AttemptFinished'`);
      expect(ledger.n).toBe(attempts.n);
    } finally {
      await client.end();
      await gw.close();
    }
  }, 120_000);
});
