import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { colouredFor } from '../../src/log-colours.js';
import { type CliResult, runCli, startServer } from '../support/cli-process.js';
import { REPO } from '../support/deploy-facts.js';
import { seedMigratedDataDir } from '../support/migrated-template.js';
import { createScratchDatabase } from '../support/services.js';

/**
 * The CLI as a new operator meets it: a bare `switchyard` and `--version` answer without opening anything, the
 * read-only commands an auditor runs need no provider secret, and logs written to a pipe or a file carry no
 * colour codes. The start-up time of each command is printed (not asserted: this machine's load decides it).
 * On a scratch PostgreSQL database when DATABASE_URL is set (where the auditor's case was found), else embedded.
 */
const postgresUrl = process.env.DATABASE_URL || null;
const SECRET_ENV = 'CLI_START_UP_PROVIDER_KEY';
const CONFIG = `
providers:
  - id: upstream
    type: openai-compatible
    baseUrl: https://llm.example.com/v1
    apiKey: env:${SECRET_ENV}
deployments:
  - id: small
    provider: upstream
    model: model-small
    capabilities: [chat, streaming]
    contextWindow: 32000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.25", outputPer1M: "1.25" }
aliases:
  - name: quick
    routes:
      - { deployment: small, priority: 0 }
tenants:
  - id: acme
`;

const ESC = '\u001b[';
const timings: Array<[string, number]> = [];

/** One command, timed from spawn to exit (Node's start, the build check is not in it: tests run dist/ directly). */
async function timed(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const started = performance.now();
  const result = await runCli(args, env);
  timings.push([args.join(' ') || '(no command)', performance.now() - started]);
  return result;
}

describe('the CLI at start-up', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let scratch: { url: string; drop: () => Promise<void> } | null = null;
  const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-cli-start-up-'));
    scratch = postgresUrl ? await createScratchDatabase(postgresUrl) : null;
    if (!scratch) await seedMigratedDataDir(join(dir, 'data'));
    writeFileSync(join(dir, 'switchyard.yaml'), CONFIG);
    env = { ...process.env, SWITCHYARD_DATA_DIR: join(dir, 'data'), DATABASE_URL: scratch?.url ?? '', LOG_LEVEL: 'warn' };
    delete env[SECRET_ENV];
    delete env.FORCE_COLOR;
  }, 60_000);

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await scratch?.drop();
    process.stderr.write(`CLI start-up (wall time, this machine now):\n${timings.map(([command, ms]) => `  ${command.padEnd(28)} ${(ms / 1000).toFixed(2)} s`).join('\n')}\n`);
  });

  test('a bare `switchyard` prints the usage and opens nothing; it no longer starts a server', async () => {
    const untouched = join(dir, 'never-created');
    const result = await timed([], { ...env, SWITCHYARD_DATA_DIR: untouched });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: switchyard <command>\n/);
    expect(result.stdout).toContain('switchyard --version prints the version');
    expect(existsSync(untouched)).toBe(false);
  });

  test('--version, -V and `version` print the package version', async () => {
    for (const flag of ['--version', '-V', 'version']) {
      const result = await timed([flag], env);
      expect([flag, result.code, result.stdout, result.stderr]).toEqual([flag, 0, `switchyard ${version}\n`, '']);
    }
  });

  test('an unknown command is still refused with the usage, exit 2', async () => {
    const result = await timed(['--versoin'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^switchyard: unknown command '--versoin'\n\nUsage:/);
  });

  test('read-only commands need no provider secret: nothing about it on stderr, and they answer', async () => {
    const applied = await timed(['apply', '-f', join(dir, 'switchyard.yaml')], { ...env, [SECRET_ENV]: 'sk-upstream-start-up-4242' });
    expect([applied.code, applied.stderr]).toEqual([0, expect.any(String)]);
    for (const args of [['audit', 'verify'], ['events', 'list', '--limit', '5'], ['audit', 'log', '--limit', '5'], ['events', 'read', 'alias-quick'], ['spend', '--tenant', 'acme'], ['projections', 'status']]) {
      const result = await timed(args, env);
      expect([args.join(' '), result.code]).toEqual([args.join(' '), 0]);
      expect(result.stderr).not.toContain(SECRET_ENV);
      expect(result.stderr).not.toMatch(/cannot be resolved|secret/i);
    }
    const missing = await timed(['requests', 'show', 'req_does_not_exist'], env);
    expect(missing.stderr).not.toContain(SECRET_ENV);
  }, 120_000);

  test('a server whose output is a pipe logs plain text, no colour codes', async () => {
    const server = await startServer({ ...env, LOG_LEVEL: 'log', SWITCHYARD_CONFIG: join(dir, 'switchyard.yaml'), [SECRET_ENV]: 'sk-upstream-start-up-4242' });
    try {
      expect(server.output()).toMatch(/\[Nest\]|switchyard|Switchyard/);
      expect(server.output()).not.toContain(ESC);
    } finally {
      await server.stop();
    }
  }, 90_000);

  test('colour: a terminal only, NO_COLOR turns it off there, FORCE_COLOR turns it on anywhere', () => {
    const tty = { isTTY: true } as NodeJS.WriteStream;
    const pipe = { isTTY: false } as unknown as NodeJS.WriteStream;
    expect(colouredFor(tty, {})).toBe(true);
    expect(colouredFor(pipe, {})).toBe(false);
    expect(colouredFor(tty, { NO_COLOR: '1' })).toBe(false);
    expect(colouredFor(tty, { NO_COLOR: '' })).toBe(true);
    expect(colouredFor(pipe, { FORCE_COLOR: '1' })).toBe(true);
    expect(colouredFor(pipe, { FORCE_COLOR: '0' })).toBe(false);
  });
});
