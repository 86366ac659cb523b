import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { TenantBudget, TenantEvent } from '../../events/tenant-events.js';
import { budgetProblem, tenantDecider } from '../../modules/access/tenant/tenant.decider.js';
import { postWebhook } from '../../modules/limits/budget/webhook-post.js';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';
import { deciderSpec } from '../support/decider-spec.js';
import { listenOn, testPort } from '../support/port-range.js';

const PORT = testPort(1811);
const budget = (url: string, allowPrivateNetwork?: boolean): TenantBudget => ({
  monthlyUsd: '10', softPct: 80, enforcement: 'hard',
  webhook: { url, secret: 'env:HOOK_KEY', ...(allowPrivateNetwork !== undefined ? { allowPrivateNetwork } : {}) },
});

describe('budget webhooks pass the outbound address policy at configuration time', () => {
  const spec = deciderSpec(tenantDecider);
  const created: TenantEvent = { type: 'TenantCreated', data: { tenantId: 'acme', name: 'Acme' } };

  test('metadata and reserved addresses are refused even when private networks are allowed', () => {
    for (const url of ['http://169.254.169.254/latest', 'http://metadata.google.internal/hook', 'http://[fd00:ec2::254]/', 'http://0.0.0.0:80/', 'http://169.254.169.254.nip.io/']) {
      expect(budgetProblem(budget(url, true))).toMatch(/^budget\.webhook\.url points at a (cloud metadata|reserved)/);
    }
    const refused = spec.given([created]).when({ type: 'SetTenantBudget', tenantId: 'acme', budget: budget('http://169.254.169.254/', true) }).thenThrows('invalid_budget', 422);
    expect(refused.message).toContain('cloud metadata');
  });

  test('loopback, private and link-local only with allowPrivateNetwork: true on the webhook', () => {
    for (const url of ['http://127.0.0.1:9000/hook', 'http://localhost/hook', 'http://10.1.2.3/hook', 'http://169.254.10.1/hook', 'http://hooks.internal/x']) {
      expect(budgetProblem(budget(url))).toMatch(/set allowPrivateNetwork: true on the webhook/);
      expect(budgetProblem(budget(url, false))).not.toBeNull();
      expect(budgetProblem(budget(url, true))).toBeNull();
    }
    spec.given([created]).when({ type: 'SetTenantBudget', tenantId: 'acme', budget: budget('http://127.0.0.1:9000/hook') }).thenThrows('invalid_budget', 422);
    expect(budgetProblem(budget('https://hooks.example.com/budget'))).toBeNull();
    expect(budgetProblem(budget('ftp://hooks.example.com/budget'))).toBe('budget.webhook.url must be an http(s) URL');
  });

  test('the YAML reads allowPrivateNetwork on a webhook, and leaves it out when false', () => {
    const yaml = (hook: string) => `
providers: [{ id: p, type: mock }]
deployments: [{ id: d, provider: p, model: m, price: { inputPer1M: "1", outputPer1M: "1" } }]
aliases: [{ name: chat, routes: [{ deployment: d }] }]
tenants:
  - id: acme
    budget: { dailyUsd: "2", webhook: { url: "http://127.0.0.1:9/h", secret: env:HOOK_KEY${hook} } }
`;
    expect(parseGatewayConfig(yaml(', allowPrivateNetwork: true')).tenants[0].budget?.webhook).toEqual({ url: 'http://127.0.0.1:9/h', secret: 'env:HOOK_KEY', allowPrivateNetwork: true });
    expect(parseGatewayConfig(yaml(', allowPrivateNetwork: false')).tenants[0].budget?.webhook).toEqual({ url: 'http://127.0.0.1:9/h', secret: 'env:HOOK_KEY' });
  });
});

describe('budget webhook deliveries pass the outbound address policy at connect time', () => {
  let server: Server;
  const received: IncomingMessage[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      received.push(req);
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await listenOn(server, PORT);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received.length = 0;
  });

  /** A public-looking name (it passes the configuration check) that DNS points at `address`. */
  const resolvingTo = (address: string) => async () => [{ address, family: 4 }];
  const url = `http://hooks.example.com:${PORT}/budget`;
  const post = (allowPrivateNetwork: boolean, address: string, refusals: string[] = []) =>
    postWebhook({ url, allowPrivateNetwork }, { 'content-type': 'application/json' }, '{"type":"budget.threshold_crossed"}', {
      timeoutMs: 2_000, resolve: resolvingTo(address), onRefused: (_host, _address, reason) => refusals.push(reason),
    });

  test('a name resolving to loopback is never connected to unless the webhook allows private networks', async () => {
    const refusals: string[] = [];
    await expect(post(false, '127.0.0.1', refusals)).rejects.toThrow();
    expect(refusals).toEqual([expect.stringContaining('a loopback address')]);
    expect(received).toHaveLength(0);
    expect(budgetProblem(budget(url))).toBeNull(); // the configured name alone looked public
    expect(await post(true, '127.0.0.1')).toBe(204);
    expect(received).toHaveLength(1);
    expect(received[0].method).toBe('POST');
  });

  test('a name resolving to a metadata address is refused even when private networks are allowed', async () => {
    const refusals: string[] = [];
    await expect(post(true, '169.254.169.254', refusals)).rejects.toThrow();
    expect(refusals).toEqual([expect.stringContaining('cloud metadata')]);
    expect(received).toHaveLength(0);
  });

  test('an IP literal is judged before connecting', async () => {
    await expect(postWebhook({ url: `http://127.0.0.1:${PORT}/budget`, allowPrivateNetwork: false }, {}, '{}', { timeoutMs: 2_000 })).rejects.toThrow();
    expect(received).toHaveLength(0);
  });
});
