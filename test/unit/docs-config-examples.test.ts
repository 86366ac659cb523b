import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPOSITORY_ROOT, markdownFiles } from '../support/docs-files.js';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';

/**
 * A configuration example a reader copies must be one the gateway accepts. Every ```yaml block of the docs
 * whose first line is `# switchyard.yaml` is a gateway configuration, and passes the real validator
 * (`parseGatewayConfig`, what `apply` and `serve` run), which refuses unknown fields and dangling references.
 */
const root = REPOSITORY_ROOT;

const examples = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))].flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(/```yaml\n(# switchyard\.yaml\n[\s\S]*?)```/g)].map((match) => ({ where: relative(root, file), yaml: match[1] })));

test('the docs mark their gateway configuration examples, the configuration guide a complete one', () => {
  expect(examples.length).toBeGreaterThanOrEqual(2);
  const guide = examples.filter((example) => example.where === join('docs', 'configuration.md'));
  expect(guide.length).toBeGreaterThanOrEqual(1);
  const complete = parseGatewayConfig(guide[0].yaml, guide[0].where);
  for (const section of ['providers', 'deployments', 'aliases', 'tenants', 'apiKeys'] as const) expect(complete[section].length).toBeGreaterThan(0);
});

test('every marked configuration example passes the validator', () => {
  const refused = examples.flatMap(({ where, yaml }) => {
    try {
      parseGatewayConfig(yaml, where);
      return [];
    } catch (error) {
      return [`${where}: ${(error as Error).message}`];
    }
  });
  expect(refused).toEqual([]);
});

test('the validator these examples pass refuses a field it does not know', () => {
  expect(() => parseGatewayConfig('# switchyard.yaml\nproviders:\n  - { id: p, type: mock, colour: blue }\n', 'sample')).toThrow(/colour/);
});
