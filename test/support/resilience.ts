import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AttemptFinished, RequestCompleted } from '../../events/request-events.js';
import type { BreakerEvent } from '../../events/breaker-events.js';
import { DeploymentHealth } from '../../modules/inference/resilience/deployment-health.js';
import { AdmissionControl, type AdmissionLoad } from '../../modules/limits/admission-control.js';
import { DeploymentConcurrency } from '../../modules/limits/deployment-concurrency.js';
import type { TestGateway } from './gateway-harness.js';

export interface AliasSpec {
  name: string;
  strategy?: string;
  /** Deployment ids; each gets the upstream model `m-{id}` on the mock. */
  routes: Array<{ id: string; priority?: number; weight?: number }>;
  /** Extra YAML under `policy:` (already indented by 6). */
  policy?: string;
}

/** A config with one deployment per route id (model `m-{id}`), the given aliases, one tenant and its key. */
export function resilienceYaml(
  aliases: AliasSpec[],
  extraKeys = '',
  /** Extra YAML lines per deployment id (already indented by 4), e.g. limits. */
  deploymentExtras: Record<string, string> = {},
): (mockUrl: string, keyEnv: string) => string {
  const ids = [...new Set(aliases.flatMap((a) => a.routes.map((r) => r.id)))];
  return (mockUrl, keyEnv) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
${ids.map((id) => `  - id: ${id}
    provider: mock-upstream
    model: m-${id}
    capabilities: [chat, streaming, tools, json_object, json_schema]
    contextWindow: 200000
    maxOutputTokens: 4096
    price: { inputPer1M: "1.00", outputPer1M: "2.00" }${deploymentExtras[id] ? `\n${deploymentExtras[id]}` : ''}`).join('\n')}
aliases:
${aliases.map((a) => `  - name: ${a.name}
    strategy: ${a.strategy ?? 'priority'}
    routes:
${a.routes.map((r, i) => `      - { deployment: ${r.id}, priority: ${r.priority ?? i}, weight: ${r.weight ?? 1} }`).join('\n')}${a.policy ? `\n    policy:\n${a.policy}` : ''}`).join('\n')}
tenants:
  - id: acme
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
${extraKeys}`;
}

export const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Hello there, gateway!' }], ...extra });

export async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function attemptsOf(gw: TestGateway, requestId: string): Promise<Array<AttemptFinished['data']>> {
  return (await gw.requestEvents(requestId)).filter((e) => e.type === 'AttemptFinished').map((e) => e.data as AttemptFinished['data']);
}

export async function completionOf(gw: TestGateway, requestId: string): Promise<RequestCompleted['data'] | undefined> {
  return (await gw.requestEvents(requestId)).find((e) => e.type === 'RequestCompleted')?.data as RequestCompleted['data'] | undefined;
}

export async function breakerEvents(gw: TestGateway, deploymentId: string): Promise<BreakerEvent[]> {
  return (await gw.gateway.platform.store.readStream(`breaker-${deploymentId}`)).map((e) => ({ type: e.type, data: e.data }) as BreakerEvent);
}

export const healthOf = (gw: TestGateway) => gw.gateway.app.get(DeploymentHealth);

/** Every permit the node holds: requests, streams, keys, tenants, queue and per-deployment slots. */
export function permitsHeld(gw: TestGateway): AdmissionLoad & { deployments: number } {
  return { ...gw.gateway.app.get(AdmissionControl).load(), deployments: gw.gateway.app.get(DeploymentConcurrency).total };
}

/** Upstream calls the mock received for one model. */
export const callsTo = (gw: TestGateway, model: string) => gw.mock.requests().filter((r) => r.model === model);

/**
 * A raw HTTP request whose response the caller controls: `pause` stops reading (a slow consumer),
 * `abort` drops the connection.
 */
export function openRequest(url: string, key: string, body: unknown): Promise<{ response: IncomingMessage; abort: () => void }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
    });
    req.on('response', (response) => resolve({ response, abort: () => req.destroy() }));
    req.on('error', reject);
    req.end(payload);
  });
}
