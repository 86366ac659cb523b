import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

/**
 * The import direction of DESIGN §3 as CI enforces it: the project's own ESLint configuration, run on
 * samples placed (virtually) in the tree, must refuse each kind of violation and accept the allowed forms.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const eslint = new ESLint({ cwd: root });

async function boundaryProblems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result.messages.filter((m) => m.ruleId === 'switchyard/layer-boundaries').map((m) => m.message);
}

describe('layer boundaries lint rule', () => {
  it('refuses a kernel file importing a module, a projection, events/ or the bootstrap', async () => {
    const problems = await boundaryProblems('src/kernel/sample.ts', [
      "import { AdminGuard } from '../../modules/admin/index.js';",
      "import { KeyIndexProjection } from '../../projections/key-index/key-index.projection.js';",
      "import type { SwitchyardEvent } from '../../events/index.js';",
      "import { readEnvironment } from '../config/environment.js';",
      'export const used = [AdminGuard, KeyIndexProjection, readEnvironment] as unknown as SwitchyardEvent;',
    ].join('\n'));
    expect(problems).toHaveLength(4);
    expect(problems[0]).toContain('the kernel imports nothing outside src/kernel');
  });

  it("refuses a module importing another module's internal file, even for a type or a re-export", async () => {
    const problems = await boundaryProblems('modules/catalog/sample.ts', [
      "import { GatewayAuthenticator } from '../access/gateway-authenticator.js';",
      "import type { TenantState } from '../access/tenant/tenant.decider.js';",
      "export { AdminGuard } from '../admin/admin.guard.js';",
      'export const used: [unknown, TenantState | null] = [GatewayAuthenticator, null];',
    ].join('\n'));
    expect(problems).toEqual([
      expect.stringContaining('import modules/access through its public surface modules/access/index.js'),
      expect.stringContaining('modules/access/index.js'),
      expect.stringContaining('modules/admin/index.js'),
    ]);
  });

  it('refuses a module reaching kernel internals or the bootstrap, and a dynamic import of an internal file', async () => {
    const problems = await boundaryProblems('modules/inference/http/sample.ts', [
      "import { SqlEventStore } from '../../../src/kernel/event-store/sql-event-store.js';",
      "import { PLATFORM } from '../../../src/platform.module.js';",
      "export const load = () => import('../../providers/provider-adapters.js');",
      'export const used = [SqlEventStore, PLATFORM];',
    ].join('\n'));
    expect(problems).toEqual([
      expect.stringContaining('src/kernel/index.js'),
      expect.stringContaining('must not import the bootstrap'),
      expect.stringContaining('modules/providers/index.js'),
    ]);
  });

  it("refuses a projection importing a module's internal file", async () => {
    const problems = await boundaryProblems('projections/routing-snapshot/sample.ts', [
      "import { priceDecider } from '../../modules/catalog/price/price.decider.js';",
      'export const used = priceDecider;',
    ].join('\n'));
    expect(problems).toEqual([expect.stringContaining('modules/catalog/index.js')]);
  });

  it("refuses a module importing a projection's internal file, even for a type", async () => {
    const problems = await boundaryProblems('modules/inference/pipeline/sample.ts', [
      "import { mayUseAlias } from '../../../projections/key-index/principal.js';",
      "import type { ResolvedDeployment } from '../../../projections/routing-snapshot/routing-snapshot.js';",
      'export const used: [unknown, ResolvedDeployment | null] = [mayUseAlias, null];',
    ].join('\n'));
    expect(problems).toEqual([
      expect.stringContaining('import projections/key-index through its public surface projections/key-index/index.js'),
      expect.stringContaining('projections/routing-snapshot/index.js'),
    ]);
  });

  it("refuses a projection importing another projection's internal file; accepts its index.js and the projection's own files", async () => {
    const problems = await boundaryProblems('projections/routing-snapshot/sample.ts', [
      "import { ControlPlaneState } from '../control-plane/control-plane-state.js';",
      "import { isBillable } from '../cost-ledger/index.js';",
      "import { buildRoutingSnapshot } from './build-routing-snapshot.js';",
      "import { EMPTY_SNAPSHOT } from './routing-snapshot.js';",
      'export const used = [ControlPlaneState, isBillable, buildRoutingSnapshot, EMPTY_SNAPSHOT];',
    ].join('\n'));
    expect(problems).toEqual([expect.stringContaining('import projections/control-plane through its public surface projections/control-plane/index.js')]);
  });

  it('accepts public surfaces, same-module internals and the bootstrap importing anything', async () => {
    expect(await boundaryProblems('modules/catalog/sample.ts', [
      "import { GatewayAuthenticator } from '../access/index.js';",
      "import { DomainError } from '../../src/kernel/index.js';",
      "import { ALIAS_EVENT_TYPES } from '../../events/index.js';",
      "import { priceDecider } from './price/price.decider.js';",
      "import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/index.js';",
      "import { ControlPlaneState } from '../../projections/control-plane/index.js';",
      'export const used = [GatewayAuthenticator, DomainError, ALIAS_EVENT_TYPES, priceDecider, RoutingSnapshotProjection, ControlPlaneState];',
    ].join('\n'))).toEqual([]);
    expect(await boundaryProblems('src/sample.ts', [
      "import { priceDecider } from '../modules/catalog/price/price.decider.js';",
      "import { SqlEventStore } from './kernel/event-store/sql-event-store.js';",
      "import { KeyIndexProjection } from '../projections/key-index/key-index.projection.js';",
      'export const used = [priceDecider, SqlEventStore, KeyIndexProjection];',
    ].join('\n'))).toEqual([]);
  });

});
