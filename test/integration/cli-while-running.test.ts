import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAIN, type ServerProcess, runCli, startServer } from '../support/cli-process.js';
import { SPOOL_PORTS, freePortIn } from '../support/port-range.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { seedEmbeddedDataDir } from '../support/pglite-template.js';
import { csvObjects } from '../support/csv.js';
import { RunningServer } from '../../src/cli/running-server.js';
import { Decimal } from 'decimal.js';

/**
 * Issue 13 item 7: with `switchyard serve` running on the embedded default (PGlite, which one process
 * may open), the CLI works from other processes through the server's operator socket: apply (dry run and
 * real), events tail (also into `head`), projections status, keys issue. Output survives pipes.
 */
/** What the in-process CLI reads from the environment: the test's data directory, no PostgreSQL, no token. */
const OWN_ENV = ['SWITCHYARD_DATA_DIR', 'LOG_LEVEL', 'DATABASE_URL', 'ADMIN_TOKEN', 'SWITCHYARD_CONFIG', 'CLICKHOUSE_URL'] as const;

describe('the CLI while a server runs on the embedded store', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let demoKey: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-cli-running-'));
    // No ClickHouse: CI's CLICKHOUSE_URL names a database other suites write too, and this one's spend is its own.
    env = { ...process.env, SWITCHYARD_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'warn', DATABASE_URL: '', ADMIN_TOKEN: '', SWITCHYARD_CONFIG: '', CLICKHOUSE_URL: '' };
    await seedEmbeddedDataDir(join(dir, 'data'));
    server = await startServer(env, await freePortIn(SPOOL_PORTS));
    demoKey = readFileSync(join(dir, 'data', 'secrets', 'demo-key'), 'utf8').trim();
    // Some traffic, so that the log is longer than one pipe buffer: eight clients at a time (the order of
    // the requests matters to nothing below).
    for (let batch = 0; batch < 120; batch += 8) {
      await Promise.all(Array.from({ length: 8 }, async (_, i) => {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST', headers: { authorization: `Bearer ${demoKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: `hello ${batch + i}` }] }),
        });
        expect(response.status).toBe(200);
        await response.text();
      }));
    }
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const lines = (text: string) => text.split('\n').filter((line) => line.length > 0);

  test('the operator socket is the owner’s alone: 0600 in a 0700 directory of the data directory', () => {
    expect(statSync(join(dir, 'data', 'run')).mode & 0o777).toBe(0o700);
    const socket = statSync(join(dir, 'data', 'run', 'switchyard.sock'));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
  });

  test('events tail prints the whole log through a pipe, and `| head -n 5` gets five lines and a quiet, successful end', async () => {
    const status = await runCli(['projections', 'status', '--json'], env);
    expect(status.code).toBe(0);
    const head = JSON.parse(status.stdout).head as number;
    expect(head).toBeGreaterThan(360); // 120 requests × 3 events, and the demo catalog

    // Four readers at once (nothing appends meanwhile): each a process of its own reading through the socket.
    const [tail, filtered, piped, counted] = await Promise.all([
      runCli(['events', 'tail'], env), // stdout is a pipe here
      runCli(['events', 'tail', '--type', 'RequestCompleted', '--from', '10'], env),
      shell(`"${process.execPath}" "${MAIN}" events tail | head -n 5; echo "tail exit: \${PIPESTATUS[0]}" >&2`, env),
      shell(`"${process.execPath}" "${MAIN}" events tail | cat | wc -l`, env),
    ]);
    expect(tail.code).toBe(0);
    const events = lines(tail.stdout).map((line) => JSON.parse(line));
    expect(events.length).toBeGreaterThanOrEqual(head);
    expect(events.map((e) => e.globalPosition)).toEqual([...events.map((e) => e.globalPosition)].sort((a, b) => a - b));
    expect(events[0]).toMatchObject({ globalPosition: expect.any(Number), streamId: expect.any(String), type: expect.any(String), data: expect.any(Object) });

    expect(lines(filtered.stdout).map((line) => JSON.parse(line)).every((e) => e.type === 'RequestCompleted' && e.globalPosition >= 10)).toBe(true);
    expect(lines(filtered.stdout)).toHaveLength(events.filter((e) => e.type === 'RequestCompleted' && e.globalPosition >= 10).length);
    expect(lines(filtered.stdout).length).toBeGreaterThan(100);

    expect(lines(piped.stdout)).toHaveLength(5);
    expect(lines(piped.stdout).map((line) => JSON.parse(line).globalPosition)).toEqual(events.slice(0, 5).map((e) => e.globalPosition));
    expect(piped.stderr).toContain('tail exit: 0');
    expect(piped.stderr).not.toMatch(/EPIPE|Error/);

    expect(Number(counted.stdout.trim())).toBe(events.length);
  }, 90_000);

  test('projections status, as a table', async () => {
    const status = await runCli(['projections', 'status'], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^event log head: global position \d+$/m);
    expect(status.stdout).toMatch(/^projection\s+kind\s+position\s+behind\s+detail$/m);
    for (const name of ['routing-snapshot', 'key-index', 'cost-ledger', 'audit-chain']) expect(status.stdout).toMatch(new RegExp(`^${name}\\s`, 'm'));
  }, 30_000);

  test('apply --dry-run plans and appends nothing; apply appends; a file the server refuses changes nothing', async () => {
    const file = join(dir, 'extra.yaml');
    writeFileSync(file, 'tenants:\n  - id: extra\n    name: Extra\n');
    const before = JSON.parse((await cliHere(['projections', 'status', '--json'])).stdout).head;
    const dry = await runCli(['apply', '-f', file, '--dry-run'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe('Plan (dry run, nothing appended): 1 change(s)\n  create tenant extra   (tenants[0])\n      name: null → "Extra"\n');
    expect(JSON.parse((await cliHere(['projections', 'status', '--json'])).stdout).head).toBe(before);

    const applied = await runCli(['apply', '-f', file], env);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toBe('Applied 1 change(s): 1 event(s) appended.\n');
    expect(applied.stderr).toContain('[1/1] create tenant extra');
    const created = await cliHere(['events', 'read', 'tenant-extra']);
    expect(lines(created.stdout).map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ type: 'TenantCreated', metadata: expect.objectContaining({ actor: `config:${file}` }) }),
    ]);
    expect((await runCli(['apply', '-f', file], env)).stdout).toBe('Nothing to change: the event store already matches the file.\n');

    // A key whose secret reference the server may not read: refused by the server, with its reason, nothing appended.
    const refusedFile = join(dir, 'refused.yaml');
    writeFileSync(refusedFile, 'tenants:\n  - id: extra\n    name: Extra\napiKeys:\n  - id: nope\n    tenant: extra\n    key: env:SWITCHYARD_NOT_A_KEY\n');
    const atHead = JSON.parse((await cliHere(['projections', 'status', '--json'])).stdout).head;
    // Set in this shell, not in the server's environment: the CLI says whose environment resolves references, up front and with the refusal.
    const refused = await runCli(['apply', '-f', refusedFile], { ...env, SWITCHYARD_NOT_A_KEY: 'set-in-the-shell-only' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/apiKeys\[0\]/);
    expect(refused.stderr).toContain(`Applying through the running server (pid ${server.child.pid}): env: and file: references resolve in the running server's (pid ${server.child.pid}) environment and files, not this shell's.`);
    expect(refused.stderr).toContain('set the variable or file where the server runs and restart it, or stop the server and apply here');
    expect(refused.stdout).toBe('');
    expect(JSON.parse((await cliHere(['projections', 'status', '--json'])).stdout).head).toBe(atHead);
  }, 90_000);

  test('config export goes through the server: the running definitions as a file that applies with no change', async () => {
    const out = join(dir, 'exported.yaml');
    const exported = await runCli(['config', 'export', '--out', out], env);
    expect({ code: exported.code, stderr: exported.stderr }).toEqual({ code: 0, stderr: `Wrote the running configuration to ${out}\n` });
    const yaml = readFileSync(out, 'utf8');
    expect(yaml).toMatch(/^# switchyard\.yaml: exported /);
    expect(yaml).toContain('name: demo');
    expect(yaml).toMatch(/key: sha256:[0-9a-f]{64}/);
    expect(yaml).not.toContain(demoKey);
    const again = await runCli(['apply', '-f', out, '--dry-run'], env);
    expect(again.stdout).toBe('Nothing to change: the event store already matches the file.\n');
  }, 60_000);

  test('keys issue prints a key that works at once; keys revoke stops it', async () => {
    const issued = await runCli(['keys', 'issue', '--tenant', 'demo', '--id', 'from-cli', '--alias', 'demo'], env);
    expect(issued.code).toBe(0);
    expect(issued.stdout).toMatch(/^sk-sy-[0-9A-Za-z]{32}\n$/);
    expect(issued.stderr).toMatch(/Issued key from-cli \(sk-sy-/);
    const key = issued.stdout.trim();
    // Recorded as the operator socket's actor; the key itself is nowhere in the log.
    const recorded = await cliHere(['events', 'read', 'apikey-from-cli']);
    expect(lines(recorded.stdout).map((line) => JSON.parse(line).metadata.actor)).toEqual(['admin:local-operator']);
    expect(recorded.stdout).not.toContain(key);
    const call = () => fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
    }).then(async (response) => (await response.text(), response.status));
    expect(await call()).toBe(200);
    const again = await runCli(['keys', 'issue', '--tenant', 'demo', '--id', 'from-cli'], env);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect((await runCli(['keys', 'revoke', 'from-cli'], env)).code).toBe(0);
    for (let waited = 0; waited < 5_000 && (await call()) !== 401; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await call()).toBe(401);
  }, 60_000);

  test('requests show and spend read through the server: the request reconstructed, the tenant\'s spend by day', async () => {
    const answered = await chat(demoKey, 'show me');
    await ledgerCaughtUp();
    const shown = await cliHere(['requests', 'show', answered.requestId]);
    expect(shown.code).toBe(0);
    const history = JSON.parse(shown.stdout);
    expect(history).toMatchObject({ requestId: answered.requestId, status: 'success', admission: { tenantId: 'demo' }, billing: { ledgerRows: 1 } });
    expect(history.attempts).toHaveLength(1);
    const missing = await cliHere(['requests', 'show', '01890000-0000-7000-8000-000000000000']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No request 01890000-0000-7000-8000-000000000000 is recorded.');

    // Old flags are named with what replaced them, before anything runs.
    const replaced = await cliHere(['spend', '--tenant', 'demo', '--period', 'day']);
    expect(replaced.code).toBe(2);
    expect(replaced.stderr).toContain('--period was replaced by --granularity day|week|month (default month)');
    expect((await cliHere(['spend', '--json'])).stderr).toContain('--json was replaced by --format json');
    const badGroup = await cliHere(['spend', '--group-by', 'tenant,planet']);
    expect(badGroup.code).toBe(2);
    expect(badGroup.stderr).toContain("--group-by: unknown 'planet' (known: tenant, key, alias, deployment, provider, model)");
    const unaligned = await cliHere(['spend', '--granularity', 'month', '--from', '2026-03-02', '--to', '2026-04-01']);
    expect(unaligned.code).toBe(2);
    expect(unaligned.stderr).toContain('--from: from must be on the first day of a month at midnight (UTC) for granularity=month.');

    const args = ['spend', '--tenant', 'demo', '--granularity', 'day', '--group-by', 'tenant,model'];
    const json = await cliHere([...args, '--format', 'json']);
    expect(json.code).toBe(0);
    const document = JSON.parse(json.stdout);
    expect(document).toMatchObject({ source: 'postgres', range: 'current-month', granularity: 'day', groupBy: ['tenant', 'model'], filters: { tenant: 'demo' } });
    expect(document.rows.length).toBeGreaterThan(0);
    expect(document.totals.costUsd).toMatch(/^\d+\.\d{12}$/);
    // The server's own record of the tenant's spend (the ledger's, summed per month) is the same money.
    const month = await new RunningServer(join(dir, 'data', 'run', 'switchyard.sock'), 0).get<{ data: Array<{ spentUsd: string }> }>('/admin/v1/tenants/demo/spend?period=month');
    expect(new Decimal(document.totals.costUsd).eq(month.data.at(-1)!.spentUsd)).toBe(true);
    // CSV parses (RFC 4180) and adds up to the same total; the range it covers is on stderr.
    const csv = await cliHere([...args, '--format', 'csv']);
    expect(csv.code).toBe(0);
    const covered = `spend ${document.from} to ${document.to} (the current month so far), by day, from ${document.source}${document.fallback ? ` (${document.fallback})` : ''}`;
    expect(csv.stderr).toBe(`${covered}\n`);
    const records = csvObjects(csv.stdout);
    expect(Object.keys(records[0])).toEqual(['period', 'tenant', 'model', 'requests', 'attempts', 'input_tokens', 'cached_input_tokens', 'cache_write_tokens', 'output_tokens', 'reasoning_tokens', 'cost_usd', 'cache_hits', 'saved_usd']);
    expect(records.map((r) => [r.period, r.tenant, r.model, r.cost_usd])).toEqual(document.rows.map((r: any) => [r.period, r.tenant, r.model, r.costUsd]));
    expect(records.reduce((sum, r) => sum.plus(r.cost_usd), new Decimal(0)).toFixed(12)).toBe(document.totals.costUsd);
    // The table: the range first, aligned columns, and a total row with the same exact amount.
    const table = await cliHere(args);
    expect(table.code).toBe(0);
    const tableLines = lines(table.stdout);
    expect(tableLines[0]).toBe(`${covered}; tenant demo`);
    expect(tableLines[1].split(/\s+/)).toEqual(['period', 'tenant', 'model', 'requests', 'attempts', 'input_tokens', 'output_tokens', 'cost_usd', 'cache_hits', 'saved_usd']);
    expect(new Set(tableLines.slice(1).map((line) => line.length)).size).toBe(1);
    expect(tableLines.at(-1)!.split(/\s+/)).toEqual(['total', ...['requests', 'attempts', 'inputTokens', 'outputTokens', 'costUsd', 'cacheHits', 'savedUsd'].map((m) => String(document.totals[m]))]);
    expect(tableLines).toHaveLength(2 + document.rows.length + 1);
    // A tenant with no traffic: zeros, not an error (the analytics API answers the same).
    const nobody = JSON.parse((await cliHere(['spend', '--tenant', 'nobody', '--format', 'json'])).stdout);
    expect(nobody).toMatchObject({ rows: [], totals: { attempts: 0, costUsd: '0.000000000000' } });
  }, 60_000);

  test('audit verify, export, checkpoint and log through the server; the export verifies line by line', async () => {
    const verify = await cliHere(['audit', 'verify', '--json']);
    expect(verify.code).toBe(0);
    const report = JSON.parse(verify.stdout);
    expect(report.ok).toBe(true);
    expect(report.verifiedEvents).toBeGreaterThan(120);
    expect((await cliHere(['audit', 'verify'])).stdout).toMatch(/^audit chain OK: \d+ events verified against the log/);

    const exported = await cliHere(['audit', 'export']);
    expect(exported.code).toBe(0);
    const exportLines = lines(exported.stdout).map((line) => JSON.parse(line));
    expect(exportLines[0]).toMatchObject({ type: 'header', format: 'switchyard-audit-export/v1' });
    const entries = exportLines.filter((line) => line.type === 'event');
    expect(entries.length).toBeGreaterThanOrEqual(report.verifiedEvents);
    for (let i = 1; i < entries.length; i++) expect(entries[i].prevHash).toBe(entries[i - 1].hash);
    const file = join(dir, 'export.ndjson');
    const toFile = await cliHere(['audit', 'export', '--out', file]);
    expect(toFile.stderr).toMatch(/wrote \d+ lines to /);
    expect(lines(readFileSync(file, 'utf8')).length).toBeGreaterThanOrEqual(exportLines.length);
    const badRange = await cliHere(['audit', 'export', '--from', '999999999']);
    expect(badRange.code).toBe(1);
    expect(badRange.stderr).toContain('is not in the audit chain');

    // The demo signs no checkpoints: both commands say why, through the server.
    const checkpoint = await cliHere(['audit', 'checkpoint']);
    expect(checkpoint.code).toBe(1);
    expect(checkpoint.stderr).toContain('No signed checkpoint yet');
    const publicKey = await cliHere(['audit', 'public-key']);
    expect(publicKey.code).toBe(1);
    expect(publicKey.stderr).toContain('SWITCHYARD_AUDIT_SIGNING_KEY is not set.');
    const log = await cliHere(['audit', 'log', '--action', 'TenantCreated']);
    expect(log.code).toBe(0);
    expect(lines(log.stdout).map((line) => JSON.parse(line).action)).toContain('TenantCreated');
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  }, 60_000);

  test('keys rotate through the server: the new secret works at once, the old one stops', async () => {
    const issued = await cliHere(['keys', 'issue', '--tenant', 'demo', '--id', 'to-rotate', '--alias', 'demo']);
    expect(issued.code).toBe(0);
    const before = issued.stdout.trim();
    expect((await chat(before, 'before')).status).toBe(200);
    const rotated = await cliHere(['keys', 'rotate', 'to-rotate']);
    expect(rotated.code).toBe(0);
    const after = rotated.stdout.trim();
    expect(after).toMatch(/^sk-sy-[0-9A-Za-z]{32}$/);
    expect(rotated.stderr).toContain('the previous secret stops working now');
    await waitFor(async () => (await chat(after, 'after')).status === 200);
    await waitFor(async () => (await chat(before, 'old')).status === 401);
  }, 60_000);

  test('projections rebuild through the server: the running server replays, the spend is the same afterwards', async () => {
    const spendOf = async () => JSON.parse((await cliHere(['spend', '--tenant', 'demo', '--group-by', 'model', '--format', 'json'])).stdout).rows;
    await ledgerCaughtUp();
    const before = await spendOf();
    const rebuilt = await cliHere(['projections', 'rebuild', 'cost-ledger']);
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stderr + rebuilt.stdout).toMatch(/Rebuilt cost-ledger from position 0 to \d+ \(replayed by the running server, process \d+\)/);
    expect(await spendOf()).toEqual(before);
    const unknown = await cliHere(['projections', 'rebuild', 'nonsense']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown projection 'nonsense'. Rebuildable: ");
    // Resume goes through the server too (nothing is halted here).
    const resumed = await cliHere(['projections', 'resume', 'cost-ledger']);
    expect(resumed).toMatchObject({ code: 0, stdout: 'cost-ledger is not halted: nothing to resume.\n' });
    expect((await cliHere(['projections', 'resume', 'nonsense'])).code).toBe(2);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  }, 60_000);

  test('reconcile through the server: the ledger side comes from the running server', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const start = Date.parse(`${day}T00:00:00Z`) / 1000;
    const usage = join(dir, 'openai-usage.json');
    writeFileSync(usage, JSON.stringify({ object: 'page', data: [{ object: 'bucket', start_time: start, end_time: start + 86_400, results: [
      { object: 'organization.usage.completions.result', input_tokens: 1, output_tokens: 1, input_cached_tokens: 0, num_model_requests: 1, model: 'mock-small' },
    ] }], has_more: false }));
    const result = await cliHere(['reconcile', '--provider', 'openai', '--provider-id', 'demo-mock', '--usage', usage, '--json']);
    expect(result.code).toBe(1); // the export above is not what the ledger holds
    const report = JSON.parse(result.stdout);
    const line = report.lines.find((l: { model: string }) => l.model === 'mock-small');
    expect(line.ledger.attempts).toBeGreaterThan(120);
    expect(line.discrepancies.map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['inputTokens', 'outputTokens']));
    const none = await cliHere(['reconcile', '--provider', 'openai', '--usage', usage]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no provider of type openai is configured');
  }, 60_000);

  test('prices import through the server: its admin API plans and schedules, as the local operator', async () => {
    // The demo deployment's model in a LiteLLM-style map: the same price first, then a dearer output from tomorrow.
    const entry = { input_cost_per_token: 5e-7, output_cost_per_token: 1.5e-6, cache_read_input_token_cost: 2.5e-7, litellm_provider: 'openai', mode: 'chat' };
    const map = join(dir, 'prices.json');
    writeFileSync(map, JSON.stringify({ sample_spec: { input_cost_per_token: 0 }, 'mock-small': entry, 'other-model': entry }));
    const same = await cliHere(['prices', 'import', map]);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('demo-mock-small (mock-small on demo-mock, mock): unchanged (entry "mock-small")');
    expect(same.stdout).toContain('The map: 1 priced entry matches no deployment (--verbose lists them)');
    writeFileSync(map, JSON.stringify({ 'mock-small': { ...entry, output_cost_per_token: 2e-6 } }));
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const dry = await cliHere(['prices', 'import', map, '--dry-run', '--effective-from', tomorrow]);
    expect(dry.stdout).toContain('demo-mock-small (mock-small on demo-mock, mock): input 0.50, output 1.50, cached input 0.25 → input 0.5, output 2, cached input 0.25 (entry "mock-small")\n');
    const real = await cliHere(['prices', 'import', map, '--effective-from', tomorrow]);
    expect(real.code).toBe(0);
    expect(real.stdout).toContain('→ input 0.5, output 2, cached input 0.25 (entry "mock-small"), price version 2\n');
    const events = lines((await cliHere(['events', 'read', 'price-demo-mock-small'])).stdout).map((line) => JSON.parse(line));
    expect(events.at(-1)).toMatchObject({ type: 'PriceScheduled', data: { effectiveFrom: tomorrow, outputPer1M: '2' }, metadata: { actor: 'admin:local-operator' } });
  }, 60_000);

  /**
   * The CLI in this process, for the commands that only talk to the server: the same code as a spawned
   * `switchyard` (spawning is what the tests above prove), without seconds of start-up per command. It
   * still reaches the server process through its operator socket.
   */
  function cliHere(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    // The cache setting as this suite's spawned CLI gets it (cli-process.ts: off unless the environment says).
    return runCliInProcess(args, { ...process.env, ...Object.fromEntries(OWN_ENV.map((name) => [name, env[name] ?? ''])) });
  }


  async function chat(key: string, content: string): Promise<{ status: number; requestId: string }> {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content }] }),
    });
    await response.text();
    return { status: response.status, requestId: response.headers.get('x-request-id') ?? '' };
  }

  /** Until the server's cost-ledger projection has every event of its types (its answers are billed). */
  async function ledgerCaughtUp(): Promise<void> {
    await waitFor(async () => {
      const status = await cliHere(['projections', 'status', '--json']);
      return JSON.parse(status.stdout).projections.find((p: { name: string }) => p.name === 'cost-ledger')?.behind === 0;
    });
  }

  async function waitFor(check: () => Promise<boolean>): Promise<void> {
    for (let waited = 0; waited < 5_000; waited += 50) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await check()).toBe(true);
  }
});

describe('--help', () => {
  test('every command and subcommand prints its usage on stdout and exits 0', async () => {
    const commands = [
      ['serve'], ['projector'], ['apply'], ['mock-provider'], ['events', 'tail'], ['events', 'list'], ['events', 'read'], ['requests', 'show'],
      ['projections', 'status'], ['projections', 'rebuild'], ['projections', 'resume'], ['audit', 'verify'], ['audit', 'export'], ['audit', 'checkpoint'], ['audit', 'public-key'],
      ['audit', 'log'], ['reconcile'], ['keys', 'issue'], ['keys', 'revoke'], ['admin-token', 'reset'],
    ];
    for (const command of commands) {
      const help = await runCliInProcess([...command, '--help'], process.env);
      expect([command, help.code]).toEqual([command, 0]);
      expect(help.stdout).toMatch(/^Usage: switchyard/);
      expect(help.stdout).toContain(`  ${command.join(' ')}`);
    }
  });
});

function shell(command: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-c', command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr })));
}
