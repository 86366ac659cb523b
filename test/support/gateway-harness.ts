import pg from 'pg';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import type { Environment } from '../../src/config/environment.js';
import { startGateway, type Gateway } from '../../src/gateway.js';
import { createMigratedScratchDatabase } from './migrated-postgres-template.js';
import { seedMigratedDataDir } from './migrated-template.js';
import type { RecordedEvent } from '../../src/kernel/event-store/event-store.js';
import { type HttpAnswer, readAnswer } from './http-answer.js';

export interface TestGateway {
  url: string;
  key: string;
  gateway: Gateway;
  mock: MockProviderServer;
  mockUrl: string;
  configPath: string;
  /** Events of one request stream. */
  requestEvents(requestId: string): Promise<RecordedEvent[]>;
  /** Count of all events whose type is in `types`. */
  countEvents(types: string[]): Promise<number>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /**
   * The event store. Unset: under CI with DATABASE_URL, a scratch PostgreSQL database of this gateway's own
   * (dropped on close), else embedded PGlite in a data directory of its own, copied from the migrated
   * template (migrated-template.ts) and removed on close. `null`: PGlite, for a suite that is about it. `environment.dataDir` overrides both.
   */
  databaseUrl?: string | null;
  /** Configuration YAML; gets the mock's base URL and the env var holding the test key. */
  yaml?: (mockUrl: string, keyEnv: string) => string;
  environment?: Partial<Environment>;
}

let keyCounter = 0;

/** Two deployments on one mock, alias `chat` (primary then backup) and `solo`, one tenant, one key. */
export function defaultYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: primary
    provider: mock-upstream
    model: model-primary
    capabilities: [chat, streaming, tools, json_object, json_schema]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00", cachedInputPer1M: "1.25" }
  - id: backup
    provider: mock-upstream
    model: model-backup
    capabilities: [chat, streaming, tools, json_object, json_schema]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.15", outputPer1M: "0.60" }
aliases:
  - name: chat
    routes:
      - { deployment: primary, priority: 0 }
      - { deployment: backup, priority: 1 }
  - name: solo
    routes:
      - { deployment: primary, priority: 0 }
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
`;
}

export async function startTestGateway(options: HarnessOptions = {}): Promise<TestGateway> {
  const scratch = options.databaseUrl === undefined ? await scratchStore() : null;
  const mock = new MockProviderServer();
  const mockUrl = await mock.listen(0);
  const key = generateApiKey();
  const keyEnv = `SY_TEST_${process.pid}_${++keyCounter}_KEY`;
  process.env[keyEnv] = key;
  process.env.SY_TEST_UPSTREAM_KEY = 'upstream-secret-value-123456';
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const configPath = join(dir, 'switchyard.yaml');
  writeFileSync(configPath, (options.yaml ?? defaultYaml)(mockUrl, keyEnv));
  // PGlite in memory runs initdb and the migrations at every start: 8-9 s of CPU a gateway, most of a run
  // without services. A data directory copied from the migrated template (made once per machine) costs 1.6 s.
  const databaseUrl = scratch?.url ?? options.databaseUrl ?? null;
  const embeddedDir = databaseUrl === null && options.environment?.dataDir === undefined ? join(dir, 'data') : null;
  if (embeddedDir) await seedMigratedDataDir(embeddedDir);
  const environment: Environment = {
    port: 0,
    host: '127.0.0.1',
    configPath,
    dataDir: embeddedDir ?? ':memory:',
    databaseUrl,
    redisUrl: null,
    clickhouseUrl: null,
    adminToken: null,
    durability: 'default',
    pollIntervalMs: 200,
    nodeId: `test-${keyCounter}`,
    logLevel: 'error',
    // Suites here count provider calls and attempts of repeated identical requests, which the exact cache
    // (on by default) would answer; a suite that passes `cache` gets the real defaults (exact-cache.test.ts).
    cache: { exactCacheEnabled: false },
    // Suites that look at request logs ask for them (with a destination of their own).
    observability: { requestLog: false },
    ...options.environment,
  };
  let gateway: Gateway;
  try {
    gateway = await startGateway(environment, { port: 0 });
  } catch (error) {
    await mock.close();
    await scratch?.drop();
    if (embeddedDir) rmSync(embeddedDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: gateway.url,
    key,
    gateway,
    mock,
    mockUrl,
    configPath,
    requestEvents: (requestId) => gateway.platform.store.readStream(`request-${requestId}`),
    countEvents: async (types) => {
      const rows = await gateway.platform.database.query<{ n: string }>(`SELECT count(*)::text AS n FROM events WHERE event_type = ANY($1::text[])`, [types]);
      return Number(rows[0].n);
    },
    close: async () => {
      await gateway.close();
      await mock.close();
      await scratch?.drop();
      if (embeddedDir) rmSync(embeddedDir, { recursive: true, force: true });
    },
  };
}

/**
 * CI runs the suites against the real PostgreSQL (the store deployments use); PGlite's start costs seconds
 * of CPU per gateway, which dozens of suites paid on two cores. Locally without DATABASE_URL: PGlite.
 */
async function scratchStore(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const base = process.env.DATABASE_URL;
  if (process.env.CI !== 'true' || !base) return null;
  return createMigratedScratchDatabase(base);
}

/** POST a JSON body (or raw string) with the test key; returns status, headers and parsed body. */
export async function postJson(
  gw: TestGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const response = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return readAnswer(response);
}

/** Splits an SSE body into its `data:` payloads. */
export function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) => block.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n'))
    .filter((data) => data.length > 0);
}

/** A test gateway on a scratch PostgreSQL database of its own, with a client on it; `close` ends both and drops the database. */
export async function startPostgresGateway(baseUrl: string, options: Omit<HarnessOptions, 'databaseUrl'> = {}): Promise<TestGateway & { sql: pg.Client }> {
  const scratch = await createMigratedScratchDatabase(baseUrl);
  let gw: TestGateway;
  try {
    gw = await startTestGateway({ ...options, databaseUrl: scratch.url });
  } catch (error) {
    await scratch.drop();
    throw error;
  }
  const sql = new pg.Client({ connectionString: scratch.url });
  await sql.connect();
  const close = gw.close;
  return Object.assign(gw, {
    sql,
    close: async () => {
      await sql.end();
      await close();
      await scratch.drop();
    },
  });
}
