import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secretReferencePolicy } from '../../src/kernel/secret-references/secret-reference-policy.js';
import { openPlatform } from '../../src/platform.js';
import { AuditChainProjection } from '../../projections/audit-chain/audit-chain.projection.js';
import { GENESIS_HASH, canonicalEvent, chainHash } from '../../projections/audit-chain/canonical-event.js';
import type { RecordedEvent } from '../../src/kernel/index.js';
import { cloneDatabase, environmentFor, sql } from '../support/audit-fixtures.js';
import { docsExportVerifier } from '../support/docs-snippets.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { runCli as runCliProcess } from '../support/cli-process.js';
import { postJson, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;

const HMAC_KEY = 'audit-suite-hmac-key-0123456789abcdef-XYZ';
const BYPASS = 'SET session_replication_role = replica';
const dir = mkdtempSync(join(tmpdir(), 'switchyard-audit-'));
let clones = 0;
/**
 * The CLI in this process (cli-in-process.ts): what verify, checkpoint and export find in each tampered
 * log is the subject here; the untouched log's human-form verify runs as a `switchyard` process of its own.
 */
const runCli = runCliInProcess;

function cliEnv(databaseUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env, DATABASE_URL: databaseUrl, CLICKHOUSE_URL: '', LOG_LEVEL: 'error', AUDIT_SUITE_KEY: HMAC_KEY,
    SWITCHYARD_AUDIT_SIGNING_KEY: 'env:AUDIT_SUITE_KEY', ...extra,
  };
}

async function verify(databaseUrl: string, args: string[] = [], extra: NodeJS.ProcessEnv = {}) {
  const result = await runCli(['audit', 'verify', '--json', ...args], cliEnv(databaseUrl, extra));
  if (!result.stdout.trim()) throw new Error(`audit verify printed nothing (exit ${result.code}): ${result.stderr}`);
  return { code: result.code, report: JSON.parse(result.stdout) };
}

/** Runs the verifier script of docs/audit.md on an export. */
async function offline(exportFile: string, keyFile?: string) {
  const script = join(dir, 'verify-audit-export.mjs');
  writeFileSync(script, docsExportVerifier());
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [script, exportFile, ...(keyFile ? [keyFile] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  return { code, out };
}

/** Events in the global order, as an auditor reads them. */
async function orderedEvents(url: string) {
  const [rows] = await sql(url, `SELECT global_position::int AS position, transaction_id::text AS tx, event_type FROM events ORDER BY transaction_id, global_position`);
  return rows as Array<{ position: number; tx: string; event_type: string }>;
}

async function traffic(gatewayUrl: Awaited<ReturnType<typeof startTestGateway>>, requests: number) {
  gatewayUrl.mock.addScenario({ model: 'model-primary', times: 1, behaviour: { status: 503 } });
  for (let i = 0; i < requests; i++) {
    const response = await postJson(gatewayUrl, '/v1/chat/completions', { model: 'chat', stream: i % 3 === 0, messages: [{ role: 'user', content: `audit ${i}` }] });
    expect(response.status).toBe(200);
  }
  await gatewayUrl.gateway.platform.committer.drain();
  await gatewayUrl.gateway.platform.runner.catchUp(['audit-chain']);
}

describeWithPostgres('audit chain on PostgreSQL: verify, tamper evidence, signed checkpoints, offline export', () => {
  let pristine: { url: string; drop: () => Promise<void> };
  let eventCount = 0;

  /** A fresh copy of the untouched log for one destructive scenario. */
  async function tampered(...statements: Array<string | [string, unknown[]]>) {
    const clone = await cloneDatabase(baseUrl!, pristine.url, `${new URL(pristine.url).pathname.slice(1)}_t${++clones}`);
    if (statements.length) await sql(clone.url, ...statements);
    return clone;
  }

  beforeAll(async () => {
    process.env.AUDIT_SUITE_KEY = HMAC_KEY;
    pristine = await createScratchDatabase(baseUrl!);
    const gw = await startTestGateway({
      databaseUrl: pristine.url,
      environment: { audit: { signingKeyRef: 'env:AUDIT_SUITE_KEY', checkpointIntervalMs: 0 } },
    });
    try {
      await traffic(gw, 30);
    } finally {
      await gw.close();
    }
    eventCount = Number((await sql(pristine.url, 'SELECT count(*)::int AS n FROM events'))[0][0].n);
  }, 60_000);

  afterAll(async () => {
    await pristine?.drop();
  });

  test('an untouched log verifies: every event recomputed, every signed checkpoint checked', async () => {
    const { code, report } = await verify(pristine.url);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.verifiedEvents).toBe(eventCount);
    expect(report.pendingEvents).toBe(0);
    expect(report.checkpoints.signaturesChecked).toBe(true);
    expect(report.checkpoints.verified).toBeGreaterThan(1);
    expect(report.checkpoints.latest.sequence).toBe(eventCount);
    // The human form says OK too.
    const plain = await runCliProcess(['audit', 'verify'], cliEnv(pristine.url));
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(new RegExp(`^audit chain OK: ${eventCount} events verified`));
  });

  test('without the key, hashes are still checked and the report says signatures were not', async () => {
    const { code, report } = await verify(pristine.url, [], { SWITCHYARD_AUDIT_SIGNING_KEY: '' });
    expect(code).toBe(0);
    expect(report.checkpoints.signaturesChecked).toBe(false);
  });

  test('altering an event as superuser (bypassing the trigger) makes verify name that position', async () => {
    const target = (await orderedEvents(pristine.url)).filter((e) => e.event_type === 'AttemptFinished')[3].position;
    const clone = await tampered();
    try {
      // The trigger refuses the edit as an ordinary session…
      await expect(sql(clone.url, `UPDATE events SET data = jsonb_set(data, '{usage,output}', '9999') WHERE global_position = ${target}`))
        .rejects.toThrow(/append-only/);
      // …a superuser can switch it off.
      await sql(clone.url, BYPASS, `UPDATE events SET data = jsonb_set(data, '{usage,output}', '9999') WHERE global_position = ${target}`);
      const { code, report } = await verify(clone.url);
      expect(code).toBe(1);
      expect(report.problem).toMatchObject({ kind: 'altered', globalPosition: target });
      const plain = await runCli(['audit', 'verify'], cliEnv(clone.url));
      expect(plain.stdout).toContain(`FAILED (altered) at global position ${target}`);
    } finally {
      await clone.drop();
    }
  });

  test('deleting an event makes verify name the missing position', async () => {
    const target = (await orderedEvents(pristine.url))[Math.floor(eventCount / 2)].position;
    const clone = await tampered(BYPASS, `DELETE FROM events WHERE global_position = ${target}`);
    try {
      const { code, report } = await verify(clone.url);
      expect(code).toBe(1);
      expect(report.problem).toMatchObject({ kind: 'missing', globalPosition: target });
    } finally {
      await clone.drop();
    }
  });

  test('reordering two events (swapping their transaction ids) makes verify name the displaced position', async () => {
    const events = await orderedEvents(pristine.url);
    const perTx = new Map<string, number>();
    for (const e of events) perTx.set(e.tx, (perTx.get(e.tx) ?? 0) + 1);
    const index = events.findIndex((e, i) => i + 1 < events.length && perTx.get(e.tx) === 1 && perTx.get(events[i + 1].tx) === 1);
    expect(index).toBeGreaterThanOrEqual(0);
    const [first, second] = [events[index], events[index + 1]];
    const clone = await tampered(BYPASS, `UPDATE events SET transaction_id = CASE WHEN global_position = ${first.position}
      THEN '${second.tx}'::xid8 ELSE '${first.tx}'::xid8 END WHERE global_position IN (${first.position}, ${second.position})`);
    try {
      const reordered = await orderedEvents(clone.url);
      expect(reordered[index].position).toBe(second.position);
      const { code, report } = await verify(clone.url);
      expect(code).toBe(1);
      expect(report.problem).toMatchObject({ kind: 'reordered', globalPosition: first.position, sequence: index + 1 });
    } finally {
      await clone.drop();
    }
  });

  test('an event inserted into the past is named', async () => {
    const middle = (await orderedEvents(pristine.url))[5];
    const clone = await tampered([`INSERT INTO events (global_position, transaction_id, stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
      OVERRIDING SYSTEM VALUE VALUES (1000000, $1::xid8, 'alias-forged', 1, gen_random_uuid(), 'AliasPublished', 1, '{}', '{"actor":"admin:forger"}')`, [middle.tx]]);
    try {
      const { code, report } = await verify(clone.url);
      expect(code).toBe(1);
      expect(report.problem).toMatchObject({ kind: 'inserted', globalPosition: 1000000 });
    } finally {
      await clone.drop();
    }
  });

  test('truncating the tail (events and chain rows) is detected by the signed checkpoint; an external checkpoint catches it even when the checkpoint rows go too', async () => {
    const checkpoint = await runCli(['audit', 'checkpoint'], cliEnv(pristine.url));
    expect(checkpoint.code).toBe(0);
    const checkpointFile = join(dir, 'checkpoint.json');
    writeFileSync(checkpointFile, checkpoint.stdout);
    expect(JSON.parse(checkpoint.stdout).sequence).toBe(eventCount);
    const keep = (await orderedEvents(pristine.url))[eventCount - 6];
    const cut = [BYPASS,
      `DELETE FROM events WHERE (transaction_id, global_position) > ('${keep.tx}'::xid8, ${keep.position})`,
      `DELETE FROM audit_chain WHERE global_position NOT IN (SELECT global_position FROM events)`] as const;
    const clone = await tampered(...cut);
    try {
      const { code, report } = await verify(clone.url);
      expect(code).toBe(1);
      expect(report.problem.kind).toBe('truncated');
      expect(report.problem.sequence).toBeGreaterThan(eventCount - 5);
      expect(report.verifiedEvents).toBe(eventCount - 5);
      // Deleting the checkpoints as well hides it from the database alone…
      await sql(clone.url, BYPASS, `DELETE FROM audit_checkpoints WHERE sequence > ${eventCount - 5}`);
      expect((await verify(clone.url)).code).toBe(0);
      // …but not from a checkpoint kept outside it.
      const external = await verify(clone.url, ['--checkpoint', checkpointFile]);
      expect(external.code).toBe(1);
      expect(external.report.problem).toMatchObject({ kind: 'truncated', sequence: eventCount });
    } finally {
      await clone.drop();
    }
  });

  test('rewriting the chain to hide an alteration contradicts the signed checkpoints', async () => {
    const target = (await orderedEvents(pristine.url)).filter((e) => e.event_type === 'AttemptFinished')[1].position;
    const clone = await tampered(BYPASS, `UPDATE events SET data = jsonb_set(data, '{cost,total}', '"0.000000000001"') WHERE global_position = ${target}`);
    try {
      // The forger rebuilds the chain over the edited log; without the key they cannot re-sign.
      const platform = await openPlatform(environmentFor(clone.url, { audit: { signingKeyRef: null, checkpointIntervalMs: 0 } }), { runDurable: true });
      try {
        await platform.runner.rebuild('audit-chain');
      } finally {
        await platform.close();
      }
      const { code, report } = await verify(clone.url);
      expect(code).toBe(1);
      expect(report.problem.kind).toBe('checkpoint-mismatch');
      expect(report.problem.globalPosition).toBeGreaterThanOrEqual(target);
    } finally {
      await clone.drop();
    }
  });

  test('a forged checkpoint signature is refused', async () => {
    const clone = await tampered(BYPASS, `UPDATE audit_checkpoints SET signature = repeat('0', 64) WHERE sequence = (SELECT max(sequence) FROM audit_checkpoints)`);
    try {
      const { code, report } = await verify(clone.url);
      expect(code).toBe(1);
      expect(report.problem).toMatchObject({ kind: 'bad-signature', sequence: eventCount });
    } finally {
      await clone.drop();
    }
  });

  describe('since the latest signed checkpoint', () => {
    /** A checkpoint about the middle of the chain, made the latest by removing those after it. */
    async function middle() {
      const [rows] = await sql(pristine.url, `SELECT global_position::int AS position, sequence::int AS sequence FROM audit_checkpoints ORDER BY sequence`);
      const checkpoints = rows as Array<{ position: number; sequence: number }>;
      const chosen = checkpoints[Math.floor(checkpoints.length / 2)];
      expect(chosen.sequence).toBeLessThan(eventCount - 5);
      return { ...chosen, cut: `DELETE FROM audit_checkpoints WHERE sequence > ${chosen.sequence}` };
    }
    const alter = (position: number) => `UPDATE events SET data = jsonb_set(data, '{usage,output}', '9999') WHERE global_position = ${position}`;

    test('only what follows the checkpoint is recomputed, and the report says where it started', async () => {
      const start = await middle();
      const clone = await tampered(BYPASS, start.cut);
      try {
        const { code, report } = await verify(clone.url, ['--since-checkpoint']);
        expect(code).toBe(0);
        expect(report).toMatchObject({ ok: true, since: { sequence: start.sequence, globalPosition: start.position }, pendingEvents: 0 });
        expect(report.verifiedEvents).toBe(eventCount - start.sequence);
        expect(report.head.sequence).toBe(eventCount);
        const plain = await runCli(['audit', 'verify', '--since-checkpoint'], cliEnv(clone.url));
        expect(plain.stdout).toContain(`since the checkpoint at sequence ${start.sequence}`);
        // The whole chain from the same database: every event.
        expect((await verify(clone.url)).report).toMatchObject({ ok: true, since: null, verifiedEvents: eventCount });
      } finally {
        await clone.drop();
      }
    });

    test('an event altered after it is found; one altered before it only by a verification from the genesis', async () => {
      const start = await middle();
      const events = (await orderedEvents(pristine.url)).filter((e) => e.event_type === 'AttemptFinished');
      const after = events.find((e) => e.position > start.position)!.position;
      const before = events.filter((e) => e.position < start.position).at(-1)!.position;
      const clone = await tampered(BYPASS, start.cut, alter(after), alter(before));
      try {
        const quick = await verify(clone.url, ['--since-checkpoint']);
        expect(quick.code).toBe(1);
        expect(quick.report.problem).toMatchObject({ kind: 'altered', globalPosition: after });
        const whole = await verify(clone.url);
        expect(whole.report.problem).toMatchObject({ kind: 'altered', globalPosition: before });
      } finally {
        await clone.drop();
      }
      const blind = await tampered(BYPASS, start.cut, alter(before));
      try {
        expect((await verify(blind.url, ['--since-checkpoint'])).report).toMatchObject({ ok: true, since: { sequence: start.sequence } });
        expect((await verify(blind.url)).report.problem).toMatchObject({ kind: 'altered', globalPosition: before });
      } finally {
        await blind.drop();
      }
    });

    test('the checkpoint it starts from is checked: its own event altered, its chain entry rewritten, its signature forged', async () => {
      const start = await middle();
      const cases: Array<[string, string, Record<string, unknown>]> = [
        ['its event', `UPDATE events SET data = data || '{"tampered": true}' WHERE global_position = ${start.position}`, { kind: 'altered', globalPosition: start.position }],
        ['its chain entry', `UPDATE audit_chain SET hash = repeat('a', 64) WHERE sequence = ${start.sequence}`, { kind: 'checkpoint-mismatch', sequence: start.sequence }],
        ['its signature', `UPDATE audit_checkpoints SET signature = repeat('0', 64) WHERE sequence = ${start.sequence}`, { kind: 'bad-signature', sequence: start.sequence }],
      ];
      for (const [what, statement, problem] of cases) {
        const clone = await tampered(BYPASS, start.cut, statement);
        try {
          const { code, report } = await verify(clone.url, ['--since-checkpoint']);
          expect([what, code, report.problem]).toEqual([what, 1, expect.objectContaining(problem)]);
        } finally {
          await clone.drop();
        }
      }
    });

    test('with a checkpoint kept outside the database it is refused (that one is checked from the genesis)', async () => {
      const file = join(dir, 'outside.json');
      writeFileSync(file, (await runCli(['audit', 'checkpoint'], cliEnv(pristine.url))).stdout);
      const refused = await runCli(['audit', 'verify', '--since-checkpoint', '--checkpoint', file], cliEnv(pristine.url));
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/verified from the genesis/);
    });
  });

  test('an exported range verifies offline with the script of docs/audit.md; an edited export does not', async () => {
    const events = await orderedEvents(pristine.url);
    const [checkpoints] = await sql(pristine.url, `SELECT global_position::int AS position, sequence::int AS sequence FROM audit_checkpoints ORDER BY sequence`);
    const end = checkpoints[checkpoints.length - 2];
    const from = events[2].position;
    const exportFile = join(dir, 'range.ndjson');
    const exported = await runCli(['audit', 'export', '--from', String(from), '--to', String(end.position), '--out', exportFile], cliEnv(pristine.url));
    expect(exported.code).toBe(0);
    const lines = readFileSync(exportFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ type: 'header', format: 'switchyard-audit-export/v1', fromSequence: 3, toSequence: end.sequence, algorithm: 'hmac-sha256' });
    expect(lines.filter((l) => l.type === 'event').map((l) => l.sequence)).toEqual(Array.from({ length: end.sequence - 2 }, (_, i) => i + 3));
    expect(lines.some((l) => l.type === 'checkpoint' && l.sequence === end.sequence)).toBe(true);
    const keyFile = join(dir, 'hmac.key');
    writeFileSync(keyFile, `${HMAC_KEY}\n`);
    const ok = await offline(exportFile, keyFile);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(new RegExp(`^OK: ${end.sequence - 2} events chain correctly, \\d+ signed checkpoints verify`));
    // One token changed in one line: the auditor's script names the position.
    const victim = lines.find((l) => l.type === 'event' && l.event.type === 'AttemptFinished');
    const edited = lines.map((l) => (l === victim ? { ...l, event: { ...l.event, data: { ...l.event.data, usage: { ...l.event.data.usage, output: 1 } } } } : l));
    const editedFile = join(dir, 'edited.ndjson');
    writeFileSync(editedFile, `${edited.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const bad = await offline(editedFile, keyFile);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain(`FAILED: position ${victim.globalPosition}: the event does not match its hash`);
    // Rewritten by someone who can edit the file: every checkpoint dropped (the hashes recomputed would then pass a
    // chain check), or the tail cut after a checkpoint. With the key, neither passes: each line must be under a signature.
    const uncheckpointed = join(dir, 'uncheckpointed.ndjson');
    writeFileSync(uncheckpointed, `${lines.filter((l) => l.type !== 'checkpoint').map((l) => JSON.stringify(l)).join('\n')}\n`);
    const dropped = await offline(uncheckpointed, keyFile);
    expect([dropped.code, dropped.out]).toEqual([1, expect.stringContaining('FAILED: no signed checkpoint covers these events')]);
    const firstCheckpoint = lines.findIndex((l) => l.type === 'checkpoint');
    const cutAfter = lines.findIndex((l, index) => index > firstCheckpoint && l.type === 'event');
    const cut = join(dir, 'cut.ndjson');
    writeFileSync(cut, `${lines.slice(0, cutAfter + 1).map((l) => JSON.stringify(l)).join('\n')}\n`);
    const tail = await offline(cut, keyFile);
    expect([tail.code, tail.out]).toEqual([1, expect.stringMatching(/FAILED: the events after sequence \d+ are not covered by a signed checkpoint/)]);
    // Without a key it says what it does not show.
    expect((await offline(exportFile)).out).toMatch(/^OK: \d+ events chain correctly \(no key: this shows only that the lines chain together\)/);
    // A wrong key fails the signatures.
    writeFileSync(keyFile, 'another-key-of-the-right-length-0123456789');
    expect((await offline(exportFile, keyFile)).out).toMatch(/the signature does not verify/);
    // A range that is not in the chain is refused with a clear message.
    const missing = await runCli(['audit', 'export', '--from', '999999'], cliEnv(pristine.url));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/position 999999 is not in the audit chain/);
  });

  test('Ed25519 checkpoints: the auditor verifies with the public key alone, online and offline', async () => {
    const db = await createScratchDatabase(baseUrl!);
    try {
      const { privateKey } = generateKeyPairSync('ed25519');
      // file: references read only under SWITCHYARD_SECRETS_DIR.
      const secrets = mkdtempSync(join(tmpdir(), 'switchyard-audit-secrets-'));
      const keyFile = join(secrets, 'ed25519.pem');
      writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
      const gw = await startTestGateway({
        databaseUrl: db.url,
        environment: {
          audit: { signingKeyRef: `file:${keyFile}`, checkpointIntervalMs: 0 },
          secretReferences: secretReferencePolicy({ ...process.env, SWITCHYARD_SECRETS_DIR: secrets }, null),
        },
      });
      try {
        await traffic(gw, 3);
      } finally {
        await gw.close();
      }
      const signing = { SWITCHYARD_AUDIT_SIGNING_KEY: `file:${keyFile}`, SWITCHYARD_SECRETS_DIR: secrets };
      const publicKey = await runCli(['audit', 'public-key'], cliEnv(db.url, signing));
      expect(publicKey.code).toBe(0);
      expect(publicKey.stdout).toMatch(/^-----BEGIN PUBLIC KEY-----/);
      const publicFile = join(dir, 'ed25519.pub.pem');
      writeFileSync(publicFile, publicKey.stdout);
      // No private key in the auditor's environment.
      const { code, report } = await verify(db.url, ['--public-key', publicFile], { SWITCHYARD_AUDIT_SIGNING_KEY: '' });
      expect(code).toBe(0);
      expect(report.checkpoints).toMatchObject({ signaturesChecked: true });
      expect(report.checkpoints.verified).toBeGreaterThan(0);
      const exportFile = join(dir, 'ed25519.ndjson');
      expect((await runCli(['audit', 'export', '--out', exportFile], cliEnv(db.url, signing))).code).toBe(0);
      const ok = await offline(exportFile, publicFile);
      expect(ok.code).toBe(0);
      expect(ok.out).toMatch(/^OK: \d+ events chain correctly, [1-9]\d* signed checkpoints verify/);
    } finally {
      await db.drop();
    }
  }, 60_000);
});

describeWithPostgres('audit chain projection: the head it keeps between batches', () => {
  const event = (position: number): RecordedEvent => ({
    globalPosition: position, transactionId: BigInt(1000 + position), streamId: 's', streamVersion: position,
    eventId: `01939a4e-0000-7000-8000-${String(position).padStart(12, '0')}`, type: 'Noted', schemaVersion: 1,
    data: { n: position }, metadata: { actor: 'test' } as RecordedEvent['metadata'], recordedAt: new Date(0),
    stored: { schemaVersion: 1, data: { n: position }, recordedAt: '2025-01-01T00:00:00.000000Z' },
  });

  test('a batch rolled back, or the chain written by someone else meanwhile, is chained from the real head', async () => {
    const db = await createScratchDatabase(baseUrl!);
    const platform = await openPlatform(environmentFor(db.url, { audit: { signingKeyRef: null, checkpointIntervalMs: 0 } }), { runDurable: false });
    try {
      const chain = new AuditChainProjection(null, 0);
      await platform.database.transaction((tx) => chain.handle(tx, [event(1), event(2)]));
      // Chained, then rolled back: the projection's kept head (sequence 3) never reached the table.
      await expect(platform.database.transaction(async (tx) => {
        await chain.handle(tx, [event(3)]);
        throw new Error('the checkpoint save failed');
      })).rejects.toThrow('the checkpoint save failed');
      await platform.database.transaction((tx) => chain.handle(tx, [event(3)]));
      // Another writer (a node that held the lease meanwhile) extends the chain; this one must follow it.
      const [[foreign]] = await sql(db.url, `SELECT hash FROM audit_chain WHERE sequence = 3`);
      const foreignHash = chainHash(foreign.hash as string, canonicalEvent({
        globalPosition: 4, transactionId: '1004', streamId: 's', streamVersion: 4, eventId: event(4).eventId, type: 'Noted',
        schemaVersion: 1, data: { n: 4 }, metadata: { actor: 'test' }, recordedAt: '2025-01-01T00:00:00.000000Z',
      }));
      await sql(db.url, [`INSERT INTO audit_chain (sequence, global_position, transaction_id, event_id, prev_hash, hash) VALUES (4, 4, '1004', $1, $2, $3)`, [event(4).eventId, foreign.hash, foreignHash]]);
      await platform.database.transaction((tx) => chain.handle(tx, [event(5)]));

      const [rows] = await sql(db.url, `SELECT sequence::int AS sequence, global_position::int AS position, prev_hash, hash FROM audit_chain ORDER BY sequence`);
      expect(rows.map((r) => [r.sequence, r.position])).toEqual([[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]]);
      let previous = GENESIS_HASH;
      for (const row of rows) {
        expect(row.prev_hash).toBe(previous);
        const stored = event(row.position as number);
        const expected = chainHash(previous, canonicalEvent({
          globalPosition: stored.globalPosition, transactionId: stored.transactionId.toString(), streamId: 's', streamVersion: stored.streamVersion,
          eventId: stored.eventId, type: 'Noted', schemaVersion: 1, data: { n: stored.globalPosition }, metadata: { actor: 'test' }, recordedAt: '2025-01-01T00:00:00.000000Z',
        }));
        expect(row.hash).toBe(expected);
        previous = row.hash as string;
      }
    } finally {
      await platform.close();
      await db.drop();
    }
  }, 60_000);
});
