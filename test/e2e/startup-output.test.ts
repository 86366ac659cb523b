import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../support/cli-process.js';
import { testPort } from '../support/port-range.js';
import { seedEmbeddedDataDir } from '../support/pglite-template.js';

/**
 * A start prints a few lines and the demo key, not the framework's route table (issue 13: ~65 lines
 * before the key; LOG_LEVEL=debug brings it back, see gateway-logger.test). The demo configuration on embedded
 * PGlite, as `npm start` runs it.
 */
describe('start-up output', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-startup-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (logLevel: string | undefined, port: number) => {
    const env: NodeJS.ProcessEnv = { ...process.env, SWITCHYARD_DATA_DIR: join(dir, `data-${port}`), DATABASE_URL: '', REDIS_URL: '', CLICKHOUSE_URL: '', SWITCHYARD_CONFIG: '' };
    delete env.LOG_LEVEL;
    delete env.ADMIN_TOKEN;
    if (logLevel) env.LOG_LEVEL = logLevel;
    await seedEmbeddedDataDir(env.SWITCHYARD_DATA_DIR!);
    const server = await startServer(env, port);
    // Probes answered by now; the demo key is printed after the serving line.
    for (let waited = 0; waited < 10_000 && !server.output().includes('Demo key:'); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    await server.stop();
    return server.output();
  };

  test('at the default level: no route table, no request lines for the probes, the key within a few lines', async () => {
    const output = await start(undefined, testPort(1330));
    const beforeKey = output.slice(0, output.indexOf('Demo key:')).split('\n').filter((line) => line.trim() !== '');
    expect(output).toContain('Demo key: sk-sy-');
    expect(output).not.toMatch(/Mapped \{/);
    expect(output).not.toMatch(/RoutesResolver|InstanceLoader/);
    expect(output).not.toContain('"path":"/readyz"');
    // Issue 34: the serving line is followed by what is in force, one line per store, cache and limit.
    const inForce = output.slice(output.indexOf('In force:'), output.indexOf('Admin token (shown once')).split('\n').slice(1).filter((line) => line.trim() !== '');
    expect(inForce.length).toBeGreaterThanOrEqual(8);
    expect(inForce.length).toBeLessThanOrEqual(14);
    expect(beforeKey.length - inForce.length).toBeLessThanOrEqual(15);
  }, 120_000);
});
