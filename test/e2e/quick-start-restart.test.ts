import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Environment } from '../../src/config/environment.js';
import { startGateway } from '../../src/gateway.js';
import { secretReferencePolicy } from '../../src/kernel/secret-references/secret-reference-policy.js';

/** The quick start: embedded PGlite in a data directory, the built-in demo, and a restart that keeps everything. */
describe('quick start on embedded PGlite', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-quickstart-'));
  const environment: Environment = {
    port: 0, host: '127.0.0.1', configPath: null, dataDir, databaseUrl: null, redisUrl: null, clickhouseUrl: null,
    adminToken: null, durability: 'default', pollIntervalMs: 200, nodeId: 'quick-start', logLevel: 'error',
  };

  async function chat(url: string, key: string, stream = false) {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', stream, messages: [{ role: 'user', content: 'Hello!' }] }),
    });
    return { status: response.status, text: await response.text(), requestId: response.headers.get('x-request-id')! };
  }

  test('serves the demo, keeps events, key and ledger across a restart, and appends no config twice', async () => {
    const first = await startGateway(environment, { port: 0 });
    let key: string;
    let firstRequest: string;
    try {
      key = first.demoKey!;
      expect(key).toMatch(/^sk-sy-[0-9A-Za-z]{32}$/);
      const buffered = await chat(first.url, key);
      expect(buffered.status).toBe(200);
      expect(JSON.parse(buffered.text).choices[0].message.content).toBeTruthy();
      const streamed = await chat(first.url, key, true);
      expect(streamed.text.trim().endsWith('data: [DONE]')).toBe(true);
      firstRequest = buffered.requestId;
      await first.platform.runner.catchUp(['cost-ledger']);
    } finally {
      await first.close();
    }

    const second = await startGateway(environment, { port: 0 });
    try {
      expect(second.demoKey).toBe(key);
      const configEvents = await second.platform.database.query<{ n: string }>(
        `SELECT count(*)::text AS n FROM events WHERE stream_id NOT LIKE 'request-%'`,
      );
      expect(Number(configEvents[0].n)).toBe(6); // the demo applied once, not again on restart
      expect((await second.platform.store.readStream(`request-${firstRequest}`)).map((e) => e.type)).toEqual([
        'RequestAdmitted', 'AttemptFinished', 'RequestCompleted',
      ]);
      const again = await chat(second.url, key);
      expect(again.status).toBe(200);
      await second.platform.runner.catchUp(['cost-ledger']);
      const ledger = await second.platform.database.query<{ n: string }>(`SELECT count(*)::text AS n FROM cost_ledger`);
      expect(Number(ledger[0].n)).toBe(3);
    } finally {
      await second.close();
    }
  }, 60_000);

  test('the demo key is readable whatever SWITCHYARD_SECRETS_DIR says, also on an in-memory store', async () => {
    const policy = secretReferencePolicy({ SWITCHYARD_SECRETS_DIR: '/nonexistent/operator/secrets' }, ':memory:');
    const gateway = await startGateway({ ...environment, dataDir: ':memory:', secretReferences: policy }, { port: 0 });
    try {
      expect((await chat(gateway.url, gateway.demoKey!)).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  test('a second process cannot open the same data directory', async () => {
    const running = await startGateway(environment, { port: 0 });
    try {
      const { PgliteDatabase } = await import('../../src/kernel/database/pglite-database.js');
      // Simulate another process: the lock file names a live pid that is not ours.
      const { writeFileSync } = await import('node:fs');
      const otherDir = mkdtempSync(join(tmpdir(), 'switchyard-locked-'));
      writeFileSync(join(otherDir, 'switchyard.pid'), String(process.ppid));
      await expect(PgliteDatabase.open(otherDir)).rejects.toThrow(/in use by process/);
    } finally {
      await running.close();
    }
  });
});
