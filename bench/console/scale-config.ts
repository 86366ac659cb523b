import { createHash } from 'node:crypto';

/**
 * The installation the console-scale database describes: its catalog, tenants and keys, applied through
 * `switchyard apply` (so the control-plane events are the product's own), and the names the generated
 * traffic uses. Deterministic: the same shape every run.
 */
export interface ScaleCatalog {
  providers: Array<{ id: string }>;
  deployments: Array<{ id: string; provider: string; model: string; inputPer1M: string; outputPer1M: string }>;
  aliases: Array<{ name: string; strategy: 'priority' | 'weighted'; routes: Array<{ deployment: string; priority: number; weight: number }> }>;
  tenants: Array<{ id: string; dailyUsd: string | null; monthlyUsd: string }>;
  keys: Array<{ id: string; tenant: string; hash: string }>;
}

export const SCALE_SHAPE = { providers: 3, deploymentsPerProvider: 8, aliases: 16, tenants: 100, keysPerTenant: 20 } as const;

export function scaleCatalog(): ScaleCatalog {
  const providers = Array.from({ length: SCALE_SHAPE.providers }, (_, i) => ({ id: `upstream-${i + 1}` }));
  const deployments = providers.flatMap((provider, p) => Array.from({ length: SCALE_SHAPE.deploymentsPerProvider }, (_, d) => ({
    id: `${provider.id}-model-${d + 1}`, provider: provider.id, model: `model-${p + 1}-${d + 1}`,
    inputPer1M: (0.15 + ((p * 8 + d) % 12) * 0.35).toFixed(2), outputPer1M: (0.6 + ((p * 8 + d) % 12) * 1.4).toFixed(2),
  })));
  const aliases = Array.from({ length: SCALE_SHAPE.aliases }, (_, a) => {
    const first = deployments[a % deployments.length];
    const second = deployments[(a + 8) % deployments.length];
    const third = deployments[(a + 17) % deployments.length];
    return a % 2 === 0
      ? { name: `chat-${a + 1}`, strategy: 'priority' as const, routes: [{ deployment: first.id, priority: 0, weight: 1 }, { deployment: second.id, priority: 1, weight: 1 }, { deployment: third.id, priority: 2, weight: 1 }] }
      : { name: `chat-${a + 1}`, strategy: 'weighted' as const, routes: [{ deployment: first.id, priority: 0, weight: 70 }, { deployment: second.id, priority: 0, weight: 30 }] };
  });
  const tenants = Array.from({ length: SCALE_SHAPE.tenants }, (_, t) => ({
    id: `tenant-${String(t + 1).padStart(3, '0')}`,
    // Every fifth tenant has a daily budget its traffic reaches: the overview has alerts to show.
    dailyUsd: t % 5 === 0 ? '0.50' : null,
    monthlyUsd: String(50 + (t % 7) * 50),
  }));
  const keys = tenants.flatMap((tenant) => Array.from({ length: SCALE_SHAPE.keysPerTenant }, (_, k) => ({
    id: `${tenant.id}-key-${String(k + 1).padStart(2, '0')}`, tenant: tenant.id,
    hash: createHash('sha256').update(`console-scale ${tenant.id} ${k}`).digest('hex'),
  })));
  return { providers, deployments, aliases, tenants, keys };
}

/** The catalog as a configuration file (`switchyard apply -f`); keys by their stored hash, upstreams unreachable on purpose (nothing calls them). */
export function scaleYaml(catalog: ScaleCatalog): string {
  const lines: string[] = ['providers:'];
  for (const provider of catalog.providers) {
    lines.push(`  - id: ${provider.id}`, '    type: openai-compatible', '    baseUrl: http://127.0.0.1:9/v1', '    allowPrivateNetwork: true', '    apiKey: env:SY_SCALE_UPSTREAM_KEY');
  }
  lines.push('deployments:');
  for (const d of catalog.deployments) {
    lines.push(`  - id: ${d.id}`, `    provider: ${d.provider}`, `    model: ${d.model}`, '    capabilities: [chat, streaming]', '    contextWindow: 128000', '    maxOutputTokens: 4096',
      `    price: { inputPer1M: "${d.inputPer1M}", outputPer1M: "${d.outputPer1M}" }`);
  }
  lines.push('aliases:');
  for (const alias of catalog.aliases) {
    lines.push(`  - name: ${alias.name}`, `    strategy: ${alias.strategy}`, '    routes:');
    for (const route of alias.routes) lines.push(`      - { deployment: ${route.deployment}, priority: ${route.priority}, weight: ${route.weight} }`);
  }
  lines.push('tenants:');
  for (const tenant of catalog.tenants) {
    lines.push(`  - id: ${tenant.id}`, `    budget: { monthlyUsd: "${tenant.monthlyUsd}"${tenant.dailyUsd ? `, dailyUsd: "${tenant.dailyUsd}"` : ''}, softPct: 80, enforcement: soft }`);
  }
  lines.push('apiKeys:');
  for (const key of catalog.keys) {
    lines.push(`  - id: ${key.id}`, `    tenant: ${key.tenant}`, `    key: sha256:${key.hash}`, '    scopes: [inference, models:read]');
  }
  return `${lines.join('\n')}\n`;
}
