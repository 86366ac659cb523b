import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { demoConfig } from '../../src/config/demo-config.js';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';
import { resolveSecret } from '../../src/kernel/secret-references/secret-reference.js';
import { secretReferencePolicy } from '../../src/kernel/secret-references/secret-reference-policy.js';

/** The built-in demo keeps its key where the default secret-reference policy lets it be read. */
describe('demo configuration', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-demo-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('the demo key lives under secrets/ of the data directory and resolves under the default policy', () => {
    const { yaml, key } = demoConfig(dir);
    const reference = parseGatewayConfig(yaml).apiKeys[0].key;
    expect(reference).toBe(`file:${join(dir, 'secrets', 'demo-key')}`);
    expect(resolveSecret(reference, secretReferencePolicy({}, dir))).toBe(key);
    expect(demoConfig(dir).key).toBe(key);
  });

  test('a key kept at the top of the data directory by an earlier version is moved, not replaced', () => {
    const earlier = generateApiKey();
    writeFileSync(join(dir, 'demo-key'), `${earlier}\n`, { mode: 0o600 });
    expect(demoConfig(dir).key).toBe(earlier);
    expect(existsSync(join(dir, 'demo-key'))).toBe(false);
    expect(existsSync(join(dir, 'secrets', 'demo-key'))).toBe(true);
  });
});
