import type { LookupAddress } from 'node:dns';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { providerErrorMessageForClient } from '../../modules/inference/pipeline/provider-error-disclosure.js';
import { MockProviderHost } from '../../modules/providers/mock/mock-provider-host.js';
import { OutboundAddressRefused } from '../../modules/providers/outbound-connector.js';
import { ProviderAdapters } from '../../modules/providers/provider-adapters.js';
import { UpstreamPools } from '../../modules/providers/upstream-pools.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import { chatRequest, resolvedDeployment } from '../support/provider-fixtures.js';

/**
 * The outbound address policy at connect time (DESIGN §10): real undici pools, the real OpenAI-compatible
 * adapter and a real HTTP server on loopback, with a resolver of the test's own standing in for DNS, so a
 * name can be made to resolve to the metadata address, to an IPv4-mapped form of it, or to a different
 * address on the next connection (a DNS rebinding).
 */
describe('outbound address policy at connect time', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  let closeAfterEach = false;
  const answers: Record<string, LookupAddress[][]> = {};
  const lookups: string[] = [];
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    lookups.push(hostname);
    const queue = answers[hostname];
    if (!queue?.length) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return queue.length > 1 ? queue.shift()! : queue[0];
  };
  let pools: UpstreamPools;
  const mockHost = new MockProviderHost();
  const adapter = new ProviderAdapters().for('openai-compatible')!;
  let deployments = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', ...(closeAfterEach ? { connection: 'close' } : {}) });
        res.end(JSON.stringify({
          id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'model-x',
          choices: [{ index: 0, message: { role: 'assistant', content: 'reached' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }));
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
    port = (server.address() as AddressInfo).port;
    pools = new UpstreamPools(mockHost, { connectTimeoutMs: 2000, connections: 2, resolve });
  });
  afterAll(async () => {
    await pools.close();
    await mockHost.close();
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  });
  beforeEach(() => {
    connections = 0;
    closeAfterEach = false;
  });

  function deployment(baseUrl: string, allowPrivateNetwork: boolean): ResolvedDeployment {
    const base = resolvedDeployment('openai-compatible', { baseUrl, allowPrivateNetwork });
    return { ...base, id: `d${++deployments}`, fingerprint: `f${deployments}` };
  }

  async function call(target: ResolvedDeployment): Promise<string> {
    const { dispatcher, baseUrl } = await pools.target(target);
    const response = await adapter.chat({
      request: chatRequest(), deployment: target, dispatcher, baseUrl, signal: new AbortController().signal, headersTimeoutMs: 5000, idleTimeoutMs: 5000,
      maxAnswerBytes: 16 * 1024 * 1024,
    });
    return response.choices[0].text;
  }

  async function refusal(target: ResolvedDeployment): Promise<ProviderError> {
    const error = await call(target).then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutboundAddressRefused);
    const refused = error as ProviderError;
    expect(refused.errorClass).toBe('connection');
    // Neither the error nor what a client would read of it names the address or the host.
    for (const text of [refused.message, providerErrorMessageForClient(refused)]) {
      expect(text).not.toMatch(/127\.0\.0\.1|169\.254|a9fe|\.test|\d+\.\d+\.\d+\.\d+/);
    }
    return refused;
  }

  test('a name is connected to at the address the resolver returned, once that address is allowed', async () => {
    answers['upstream.test'] = [[{ address: '127.0.0.1', family: 4 }]];
    expect(await call(deployment(`http://upstream.test:${port}/v1`, true))).toBe('reached');
    expect(connections).toBe(1);
    expect(lookups).toContain('upstream.test');
  });

  test('a name that resolves to loopback is refused without allowPrivateNetwork, before any connection', async () => {
    answers['sneaky.test'] = [[{ address: '127.0.0.1', family: 4 }]];
    await refusal(deployment(`http://sneaky.test:${port}/v1`, false));
    expect(connections).toBe(0);
  });

  test.each([
    ['the metadata address', [{ address: '169.254.169.254', family: 4 }]],
    ['the metadata address, IPv4-mapped (dotted)', [{ address: '::ffff:169.254.169.254', family: 6 }]],
    ['the metadata address, IPv4-mapped (hex)', [{ address: '::ffff:a9fe:a9fe', family: 6 }]],
    ['the EC2 IPv6 metadata address', [{ address: 'fd00:ec2::254', family: 6 }]],
    ['loopback and the metadata address together', [{ address: '127.0.0.1', family: 4 }, { address: '169.254.169.254', family: 4 }]],
  ])('a name that resolves to %s is refused even with allowPrivateNetwork', async (_name, addresses) => {
    const host = `metadata-${Object.keys(answers).length}.test`;
    answers[host] = [addresses];
    await refusal(deployment(`http://${host}:${port}/v1`, true));
    expect(connections).toBe(0);
  });

  test('IP literals skip DNS, so they are checked before connecting', async () => {
    await refusal(deployment(`http://127.0.0.1:${port}/v1`, false));
    await refusal(deployment(`http://[::ffff:7f00:1]:${port}/v1`, false));
    expect(connections).toBe(0);
    expect(await call(deployment(`http://127.0.0.1:${port}/v1`, true))).toBe('reached');
    expect(connections).toBe(1);
  });

  test('every new connection resolves again and is checked again: a rebinding to the metadata address is caught', async () => {
    closeAfterEach = true; // forces the second call onto a new connection
    answers['rebind.test'] = [[{ address: '127.0.0.1', family: 4 }], [{ address: '169.254.169.254', family: 4 }]];
    const target = deployment(`http://rebind.test:${port}/v1`, true);
    expect(await call(target)).toBe('reached');
    await new Promise((done) => setTimeout(done, 50));
    const before = lookups.filter((host) => host === 'rebind.test').length;
    await refusal(target);
    expect(lookups.filter((host) => host === 'rebind.test').length).toBe(before + 1);
    expect(connections).toBe(1);
  });

  test('the in-process mock provider is the gateway\'s own loopback server and needs no opt-in', async () => {
    const mock = resolvedDeployment('mock', { baseUrl: null, allowPrivateNetwork: false });
    const target = { ...mock, id: 'builtin-mock', fingerprint: 'builtin' };
    expect(await call(target)).toEqual(expect.any(String));
  });
});
