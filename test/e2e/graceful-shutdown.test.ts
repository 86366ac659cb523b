import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { openDatabase } from '../../src/kernel/database/open-database.js';
import { startServer } from '../support/cli-process.js';
import { type LoadResult, sendRequest } from '../support/load.js';
import { createScratchDatabase } from '../support/services.js';
import { testPort } from '../support/port-range.js';

/**
 * SIGTERM under load (issue 13, Build 5): a real `serve` process with buffered and streamed requests
 * in flight. It must stop taking new work, finish what it accepted within the deadline, exit 0, and
 * every request answered 200 must be in the ledger when it is gone. One store: a scratch PostgreSQL
 * database when DATABASE_URL is set, else embedded PGlite.
 */
const postgresUrl = process.env.DATABASE_URL || null;
/** This suite's own port (port-range.ts). */
const PORT = testPort(1310);
const DEADLINE_MS = 8_000;

describe('graceful shutdown', () => {
  let dir: string;
  let mock: MockProviderServer;
  let mockUrl = '';
  let scratch: { url: string; drop: () => Promise<void> } | null = null;
  const key = generateApiKey();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-shutdown-'));
    mock = new MockProviderServer();
    mockUrl = await mock.listen(0);
    scratch = postgresUrl ? await createScratchDatabase(postgresUrl) : null;
  });
  afterAll(async () => {
    await mock.close();
    await scratch?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The configuration and environment of one server: alias `chat` on the mock's `model` (its behaviour set by the test). */
  function serverEnv(name: string, model: string, deadlineMs: number): NodeJS.ProcessEnv {
    const configPath = join(dir, `${name}.yaml`);
    writeFileSync(configPath, `
providers:
  - { id: upstream, type: openai-compatible, baseUrl: "${mockUrl}/v1", apiKey: "env:SHUTDOWN_UPSTREAM_KEY", allowPrivateNetwork: true }
deployments:
  - { id: slow, provider: upstream, model: ${model}, price: { inputPer1M: "1", outputPer1M: "2" } }
aliases:
  - { name: chat, routes: [{ deployment: slow, priority: 0 }] }
tenants:
  - { id: acme }
apiKeys:
  - { id: acme-app, tenant: acme, key: "env:SHUTDOWN_KEY" }
`);
    return {
      ...process.env, SWITCHYARD_CONFIG: configPath, SWITCHYARD_DATA_DIR: join(dir, 'data'), DATABASE_URL: scratch?.url ?? '', LOG_LEVEL: 'log',
      ADMIN_TOKEN: 'sy-admin-shutdown-test-token-0123456789', SWITCHYARD_SHUTDOWN_DEADLINE_MS: String(deadlineMs), SWITCHYARD_REQUEST_LOG: 'off',
      SHUTDOWN_UPSTREAM_KEY: 'shutdown-upstream-secret', SHUTDOWN_KEY: key,
    };
  }

  test('SIGTERM under load: in-flight requests and streams finish, the process exits 0, and every 200 is billed', async () => {
    // Streams last about a second (20 chunks, 50 ms apart); buffered answers take 300 ms.
    mock.addScenario({ model: 'model-slow', behaviour: { latencyMs: 300, chunks: 20, chunkGapMs: 50 } });
    const env = serverEnv('load', 'model-slow', DEADLINE_MS);
    const server = await startServer(env, PORT);
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    let signalledAt = 0;
    let exitedAt = 0;
    void exited.then(() => (exitedAt = Date.now()));

    // Eight clients send back to back, alternating buffered and streamed, until the server is gone.
    const results: Array<LoadResult & { sentAt: number; endedAt: number }> = [];
    let stop = false;
    // When each stream still under way was sent.
    const streaming = new Map<object, number>();
    const clients = Array.from({ length: 8 }, async (_, client) => {
      for (let i = 0; !stop; i++) {
        const sentAt = Date.now();
        const kind = (client + i) % 2 === 0 ? 'stream' : 'buffered';
        const token = {};
        if (kind === 'stream') streaming.set(token, sentAt);
        const result = await sendRequest(server.url, key, kind);
        streaming.delete(token);
        results.push({ ...result, sentAt, endedAt: Date.now() });
        if (result.status === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    // Let load build up, then SIGTERM while requests and streams are in flight: at least one stream must
    // be well under way (sent 400 ms before, of its 1.3 s), or every request of a round could be just
    // finishing or just sent when the signal goes (the clients run in step), and a stream sent a moment
    // before it be refused 503 as the server closes.
    const streamUnderWay = () => [...streaming.values()].some((sentAt) => Date.now() - sentAt > 400);
    while (results.filter((r) => r.status === 200).length < 12 || !streamUnderWay()) await new Promise((resolve) => setTimeout(resolve, 20));
    signalledAt = Date.now();
    server.child.kill('SIGTERM');
    const code = await exited;
    stop = true;
    await Promise.all(clients);

    expect(code).toBe(0);
    const output = server.output();
    expect(output).toContain('SIGTERM: finishing in-flight requests and closing');
    expect(output).not.toContain('shutdown deadline');
    // The process was gone within the deadline (plus the time to close the store).
    expect(exitedAt - signalledAt).toBeLessThan(DEADLINE_MS + 5_000);

    // Requests in flight at the signal were finished, streams through [DONE]: none was cut.
    const inFlightAtSignal = results.filter((r) => r.sentAt < signalledAt && r.endedAt > signalledAt);
    expect(inFlightAtSignal.length).toBeGreaterThan(0);
    expect(inFlightAtSignal.filter((r) => r.kind === 'stream' && r.status === 200).length).toBeGreaterThan(0);
    for (const result of inFlightAtSignal) {
      // Either answered completely, or refused cleanly (503 while closing, or no connection at all) — never half an answer.
      if (result.status === 200) expect(result.complete).toBe(true);
      else expect([0, 503]).toContain(result.status);
    }
    const answered = results.filter((r) => r.status === 200);
    expect(answered.every((r) => r.complete)).toBe(true);
    const answeredIds = answered.map((r) => r.requestId!);
    expect(new Set(answeredIds).size).toBe(answeredIds.length);

    // Every 200 is in the ledger — the process applied its own events before it went — exactly once.
    const database = await openDatabase({ databaseUrl: scratch?.url ?? null, dataDir: scratch ? null : join(dir, 'data') });
    try {
      const rows = await database.query<{ request_id: string; n: string }>(
        `SELECT request_id::text AS request_id, count(*)::text AS n FROM cost_ledger WHERE request_id::text = ANY($1::text[]) GROUP BY request_id`,
        [answeredIds],
      );
      expect(rows.length).toBe(answeredIds.length);
      expect(rows.every((row) => row.n === '1')).toBe(true);
      // And nothing half-done was left: every request admitted has its RequestCompleted.
      const open = await database.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM events a WHERE a.event_type = 'RequestAdmitted'
           AND NOT EXISTS (SELECT 1 FROM events c WHERE c.stream_id = a.stream_id AND c.event_type = 'RequestCompleted')`,
      );
      expect(open[0].n).toBe('0');
    } finally {
      await database.close();
    }
  }, 120_000);

  test('a stream longer than the deadline is cut at the deadline and still billed for what it relayed', async () => {
    // 100 chunks, 100 ms apart: ten seconds, far beyond a one-second deadline.
    mock.addScenario({ model: 'model-endless', behaviour: { chunks: 100, chunkGapMs: 100 } });
    const server = await startServer(serverEnv('deadline', 'model-endless', 1_000), PORT + 1);
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'go on' }] }),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    await reader.read(); // the stream is flowing
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    let text = '';
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
    } catch {
      // the connection was cut: that is the point
    }
    const endedAt = Date.now();
    expect(await exited).toBe(0);
    expect(endedAt - signalledAt).toBeLessThan(5_000);
    expect(text).not.toContain('[DONE]');
    expect(server.output()).toContain('shutdown deadline (1000 ms) reached: 1 request(s) still in flight were ended');

    const database = await openDatabase({ databaseUrl: scratch?.url ?? null, dataDir: scratch ? null : join(dir, 'data') });
    try {
      const events = await database.query<{ event_type: string; data: any }>(
        `SELECT event_type, data FROM events WHERE stream_id = $1 ORDER BY stream_version`, [`request-${requestId}`],
      );
      expect(events.map((e) => e.event_type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
      expect(events[1].data.outcome).toBe('cancelled');
      expect(events[1].data.usage.output).toBeGreaterThan(0);
      expect(events[2].data.status).toBe('cancelled');
      const ledger = await database.query<{ output_tokens: number }>(`SELECT output_tokens FROM cost_ledger WHERE request_id::text = $1`, [requestId]);
      expect(ledger).toHaveLength(1);
      expect(Number(ledger[0].output_tokens)).toBe(events[1].data.usage.output);
    } finally {
      await database.close();
    }
  }, 120_000);
});
