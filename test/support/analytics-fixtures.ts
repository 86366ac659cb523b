import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { type RequestKind, runLoad } from './load.js';

/** Two tenants, three keys, a failover alias, an alias whose only deployment fails mid-stream. */
export const ANALYTICS_KEYS = {
  acmeApp: 'acme-app',
  acmeBatch: 'acme-batch',
  globexApp: 'globex-app',
} as const;

export function analyticsYaml(mockUrl: string, keyEnv: string): string {
  process.env.ANALYTICS_BATCH_KEY ??= generateApiKey();
  process.env.ANALYTICS_GLOBEX_KEY ??= generateApiKey();
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
    capabilities: [chat, streaming]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00", cachedInputPer1M: "1.25" }
  - id: backup
    provider: mock-upstream
    model: model-backup
    capabilities: [chat, streaming]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.15", outputPer1M: "0.60" }
  - id: shaky
    provider: mock-upstream
    model: model-shaky
    capabilities: [chat, streaming]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "1.10", outputPer1M: "4.40" }
aliases:
  - name: chat
    routes:
      - { deployment: primary, priority: 0 }
      - { deployment: backup, priority: 1 }
  - name: shaky
    routes:
      - { deployment: shaky, priority: 0 }
tenants:
  - id: acme
  - id: globex
apiKeys:
  - id: ${ANALYTICS_KEYS.acmeApp}
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference]
  - id: ${ANALYTICS_KEYS.acmeBatch}
    tenant: acme
    key: env:ANALYTICS_BATCH_KEY
    scopes: [inference]
  - id: ${ANALYTICS_KEYS.globexApp}
    tenant: globex
    key: env:ANALYTICS_GLOBEX_KEY
    scopes: [inference]
`;
}

const MIX: Array<{ kind: RequestKind; model: string }> = [
  { kind: 'buffered', model: 'chat' }, { kind: 'stream', model: 'chat' }, { kind: 'buffered', model: 'chat' },
  { kind: 'disconnect', model: 'chat' }, { kind: 'stream', model: 'shaky' }, { kind: 'stream', model: 'chat' },
];

/** Buffered, streamed, cancelled (client disconnect) and failed-mid-stream requests from all three keys. */
export async function mixedTraffic(gatewayUrl: string, firstKey: string, perKey: number): Promise<void> {
  await Promise.all([firstKey, process.env.ANALYTICS_BATCH_KEY!, process.env.ANALYTICS_GLOBEX_KEY!].map((key, k) =>
    runLoad(gatewayUrl, key, perKey, 4, (i) => MIX[(i + k) % MIX.length])));
}
