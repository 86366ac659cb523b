import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServerProcess, startServer } from '../support/cli-process.js';
import { SPOOL_PORTS, freePortIn } from '../support/port-range.js';
import { seedEmbeddedDataDir } from '../support/pglite-template.js';

/**
 * Issue 34 item 6, as an operator meets it: `switchyard serve` on the laptop default (embedded PGlite,
 * the demo configuration), its stdout read as a terminal or a log shipper would. A quiet node writes
 * each request's log line within a second (it used to hold lines in a 4 KB buffer until more came),
 * every line says what the exact cache and the Idempotency-Key did, and the start-up banner says what is
 * in force without a secret.
 */
describe('a spawned gateway\'s request log and start-up banner', () => {
  let dir: string;
  let server: ServerProcess;
  let demoKey: string;
  const PROMPT_MARKER = 'zebra-secret-plan-5512';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-request-log-'));
    const env = {
      ...process.env, SWITCHYARD_DATA_DIR: join(dir, 'data'), LOG_LEVEL: 'log', SWITCHYARD_CACHE: 'on',
      DATABASE_URL: '', REDIS_URL: '', CLICKHOUSE_URL: '', ADMIN_TOKEN: '', SWITCHYARD_CONFIG: '',
    };
    await seedEmbeddedDataDir(join(dir, 'data'));
    server = await startServer(env, await freePortIn(SPOOL_PORTS));
    demoKey = readFileSync(join(dir, 'data', 'secrets', 'demo-key'), 'utf8').trim();
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const chat = async (content: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demoKey}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content }] }),
    });
    await response.text();
    return { status: response.status, requestId: response.headers.get('x-request-id')!, cache: response.headers.get('x-switchyard-cache'), answeredAt: Date.now() };
  };

  /** The first log line on stdout that `matches`, polled every 10 ms for up to `ms` (generous: a loaded machine). */
  async function lineWhere(matches: (text: string) => boolean, ms = 3_000): Promise<{ line: Record<string, unknown>; seenAt: number }> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = server.output().split('\n').find((text) => text.startsWith('{') && matches(text));
      if (found) return { line: JSON.parse(found) as Record<string, unknown>, seenAt: Date.now() };
      if (Date.now() > deadline) throw new Error(`no such log line within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  const lineOf = (requestId: string) => lineWhere((text) => text.includes(`"requestId":"${requestId}"`));

  test('the banner says which stores, caches and limits are in force, each with how to change it, and no secret', () => {
    const output = server.output();
    const banner = output.slice(output.indexOf('In force:'), output.indexOf('Admin token (shown once'));
    for (const expected of [
      `event store: embedded PGlite at ${join(dir, 'data')} (DATABASE_URL=postgres://… for PostgreSQL)`,
      'rate limits, budgets, concurrency: in this process, this node only (REDIS_URL=redis://… to share them across nodes)',
      'exact cache: on, in this process up to 64 MiB',
      'SWITCHYARD_CACHE=off to turn off',
      'durability: default (SWITCHYARD_DURABILITY=default|strict|async)',
      'request log: on',
      'configuration: the built-in demo',
      'admin token: generated now, printed below once and stored hashed',
    ]) expect(banner).toContain(expected);
    const token = /Admin token \(shown once, stored hashed\): (\S+)/.exec(output)![1];
    expect(banner).not.toContain(token);
    expect(banner).not.toContain(demoKey);
  });

  test('a quiet node writes the line of its one request within a second; cache miss, then hit (explained), then bypass', async () => {
    // Nothing else is in flight: the line must not wait for others to fill a buffer.
    const first = await chat(`hello ${PROMPT_MARKER}`);
    expect([first.status, first.cache]).toEqual([200, 'miss']);
    const { line: missLine, seenAt } = await lineOf(first.requestId);
    const delayMs = seenAt - first.answeredAt;
    // The measured delay, for the report (the flush timer is 200 ms; polling adds up to 10 ms).
    process.stdout.write(`request-log delay on a quiet node: ${delayMs} ms\n`);
    expect(delayMs).toBeLessThan(3_000);
    expect(missLine).toMatchObject({ msg: 'request', status: 200, alias: 'demo', cache: 'miss', idempotency: 'none', attempts: 1 });
    expect(missLine.deployment).not.toBeNull();

    const hit = await chat(`hello ${PROMPT_MARKER}`);
    expect(hit.cache).toBe('hit');
    // No route, no attempt and no cost, and the line says why.
    expect((await lineOf(hit.requestId)).line).toMatchObject({ status: 200, cache: 'hit', deployment: null, attempts: 0, idempotency: 'none' });

    const bypass = await chat(`hello ${PROMPT_MARKER}`, { 'cache-control': 'no-cache' });
    expect(bypass.cache).toBe('bypass');
    expect((await lineOf(bypass.requestId)).line).toMatchObject({ status: 200, cache: 'bypass', attempts: 1 });
  });

  test('the Idempotency-Key outcome: stored, replayed, key_reused; a refusal before the cache has cache null', async () => {
    const key = { 'idempotency-key': 'order-7781', 'cache-control': 'no-store' };
    const stored = await chat('pay order 7781', key);
    expect(stored.status).toBe(200);
    expect((await lineOf(stored.requestId)).line).toMatchObject({ idempotency: 'stored', cache: 'bypass' });
    const replayed = await chat('pay order 7781', key);
    expect(replayed.status).toBe(200);
    // The replay answers with the original request's id; its own line is the one that says 'replayed'.
    expect(replayed.requestId).toBe(stored.requestId);
    expect((await lineWhere((text) => text.includes('"idempotency":"replayed"'))).line).toMatchObject({ status: 200, attempts: 0, cache: null });
    const reused = await chat('pay order 9999', key);
    expect(reused.status).toBe(422);
    expect((await lineOf(reused.requestId)).line).toMatchObject({ status: 422, idempotency: 'key_reused', cache: null, errorClass: 'idempotency_key_reused' });
    const unauthenticated = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect((await lineOf(unauthenticated.headers.get('x-request-id')!)).line).toMatchObject({ status: 401, cache: null, idempotency: 'none' });
  });

  test('no prompt, completion or key reaches the log', async () => {
    await lineWhere((text) => text.includes('"status":401'));
    const output = server.output();
    expect(output).not.toContain(PROMPT_MARKER);
    expect(output).not.toContain('order 7781');
    // The demo key is printed once in the banner's "Try it" block for the operator; never in a request line.
    const requestLines = output.split('\n').filter((text) => text.startsWith('{') && text.includes('"msg":"request"'));
    expect(requestLines.length).toBeGreaterThanOrEqual(7); // the seven requests above (health probes are debug lines)
    for (const text of requestLines) expect(text).not.toContain(demoKey);
  });
});
