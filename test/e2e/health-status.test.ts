import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { testPort } from '../support/port-range.js';

const ADMIN_TOKEN = 'sy-admin-health-status-test-token-0123456789';
/** A port of this suite's own (port-range.ts) with nothing listening: a Redis that is down. */
const DEAD_REDIS_PORT = testPort(1399);
const DEAD_REDIS = `redis://127.0.0.1:${DEAD_REDIS_PORT}`;

describe('health: /healthz, /readyz and /admin/v1/status', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({ databaseUrl: null, environment: { adminToken: ADMIN_TOKEN, redisUrl: DEAD_REDIS } });
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('/healthz is liveness only', async () => {
    const response = await fetch(`${gw.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  test('/readyz lists every check and names a Redis that is down, without failing the node over it', async () => {
    const response = await fetch(`${gw.url}/readyz`);
    const body: any = await response.json();
    expect(response.status).toBe(200);
    expect(body).toMatchObject({
      status: 'ready',
      eventStore: { reachable: true, kind: 'pglite' },
      checks: {
        eventStore: { status: 'ok', required: true },
        projections: { status: 'ok', required: true },
        redis: { status: 'failing', required: false, detail: 'not answering' },
        clickhouse: { status: 'not_configured', required: false },
      },
    });
    expect(body.problems).toEqual(['redis: not answering (limits and breakers are local meanwhile)']);
    expect(body.projections).toEqual(expect.arrayContaining([{ name: 'routing-snapshot', behind: 0 }, { name: 'key-index', behind: 0 }]));
    // Public output: no address.
    expect(JSON.stringify(body)).not.toContain(String(DEAD_REDIS_PORT));
  });

  test('/admin/v1/status needs the admin token and shows versions, checks and each projection\'s lag', async () => {
    expect((await fetch(`${gw.url}/admin/v1/status`)).status).toBe(401);
    const response = await fetch(`${gw.url}/admin/v1/status`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(response.status).toBe(200);
    const body: any = await response.json();
    expect(body.versions).toEqual({ switchyard: '0.1.0', node: process.versions.node, eventStore: expect.stringMatching(/^PGlite \(PostgreSQL \d+/) });
    expect(body.ready).toBe(true);
    expect(body.checks.redis.status).toBe('failing');
    expect(body.uptimeSeconds).toBeGreaterThanOrEqual(0);
    const byName = new Map(body.projections.map((p: { name: string }) => [p.name, p]));
    expect(byName.get('routing-snapshot')).toMatchObject({ kind: 'in-memory', behind: 0 });
    expect(byName.get('cost-ledger')).toMatchObject({ kind: 'durable', leaseHeld: true, behind: expect.any(Number) });
  });
});
