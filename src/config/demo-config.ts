import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';

/**
 * The built-in demo for `npm start` without a config file: the in-process mock provider behind the
 * alias `demo`, a demo tenant, and a demo key kept in `secrets/` of the data directory (mode 0600, a
 * directory secret references may read by default) so that the same key works after a restart.
 */
export function demoConfig(dataDir: string): { yaml: string; key: string; secretsDir: string } {
  // An in-memory store forgets the demo tenant at exit, so its key need not outlive the process either.
  const secrets = dataDir === ':memory:' ? mkdtempSync(join(tmpdir(), 'switchyard-demo-')) : join(resolve(dataDir), 'secrets');
  mkdirSync(secrets, { recursive: true, mode: 0o700 });
  const keyPath = join(secrets, 'demo-key');
  // Earlier versions kept the key at the top of the data directory; keep using it.
  const legacy = join(dataDir, 'demo-key');
  if (dataDir !== ':memory:' && !existsSync(keyPath) && existsSync(legacy)) renameSync(legacy, keyPath);
  if (!existsSync(keyPath)) writeFileSync(keyPath, `${generateApiKey()}\n`, { mode: 0o600 });
  const key = readFileSync(keyPath, 'utf8').trim();
  const yaml = `
providers:
  - id: demo-mock
    type: mock
deployments:
  - id: demo-mock-small
    provider: demo-mock
    model: mock-small
    capabilities: [chat, streaming, tools, json_object, json_schema, reasoning, documents]
    contextWindow: 32000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.50", outputPer1M: "1.50", cachedInputPer1M: "0.25" }
aliases:
  - name: demo
    strategy: priority
    routes:
      - { deployment: demo-mock-small, priority: 0, weight: 1 }
tenants:
  - id: demo
    name: Demo tenant
apiKeys:
  - id: demo-key
    tenant: demo
    key: ${JSON.stringify(`file:${keyPath}`)}
    aliases: [demo]
    scopes: [inference, models:read, usage:read]
`;
  return { yaml, key, secretsDir: secrets };
}
