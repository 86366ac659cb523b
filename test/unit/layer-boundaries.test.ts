import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';

/**
 * The import direction of DESIGN §3 (docs/architecture.md) as CI enforces it: the project's own ESLint
 * configuration, run on samples placed (virtually) in the tree, must refuse each kind of violation and
 * accept the allowed forms; and the tree itself, as a graph of areas, has no cycle and no upward arrow.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const eslint = new ESLint({ cwd: root });

/** The rule's own graph functions (a plain ES module beside eslint.config.js, outside the compiled tree). */
interface LayerRule {
  LAYERS: string[];
  areaGraph(root: string): Map<string, Map<string, string[]>>;
  areaCycles(graph: Map<string, Map<string, string[]>>): string[][];
  upwardImports(graph: Map<string, Map<string, string[]>>): string[];
}
const loadRule = async (): Promise<LayerRule> => import(pathToFileURL(join(root, 'eslint-rules', 'layer-boundaries.js')).href);

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
      "import type { TenantCommand } from '../access/tenant/tenant.decider.js';",
      "export { AdminGuard } from '../admin/admin.guard.js';",
      'export const used: [unknown, TenantCommand | null] = [GatewayAuthenticator, null];',
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
      "import { PlatformModule } from '../../../src/platform.module.js';",
      "export const load = () => import('../../providers/provider-adapters.js');",
      'export const used = [SqlEventStore, PlatformModule];',
    ].join('\n'));
    expect(problems).toEqual([
      expect.stringContaining('src/kernel/index.js'),
      expect.stringContaining('must not import the bootstrap'),
      expect.stringContaining('modules/providers/index.js'),
    ]);
  });

  it('refuses an import up the layers: a projection importing a module, even its surface or a type; events/ importing a projection or a module', async () => {
    expect(await boundaryProblems('projections/routing-snapshot/sample.ts', [
      "import { priceDecider } from '../../modules/catalog/price/price.decider.js';",
      "import { providerSettingsProblem } from '../../modules/catalog/index.js';",
      "import type { Principal } from '../../modules/access/index.js';",
      'export const used: [unknown, unknown, Principal | null] = [priceDecider, providerSettingsProblem, null];',
    ].join('\n'))).toEqual([
      expect.stringContaining('projections/routing-snapshot is in the projections layer, below modules: it imports nothing from modules/catalog'),
      expect.stringContaining('imports nothing from modules/catalog'),
      expect.stringContaining('imports nothing from modules/access'),
    ]);
    expect(await boundaryProblems('events/sample.ts', [
      "import { ControlPlaneState } from '../projections/control-plane/index.js';",
      "import { tenantDecider } from '../modules/access/index.js';",
      "import { DomainError } from '../src/kernel/index.js';",
      'export const used = [ControlPlaneState, tenantDecider, DomainError];',
    ].join('\n'))).toEqual([
      expect.stringContaining('events is in the events layer, below projections'),
      expect.stringContaining('events is in the events layer, below modules'),
    ]);
  });

  it('refuses an import that closes a cycle between two modules or two projections, naming the cycle', async () => {
    // modules/inference imports modules/canonical throughout; projections/routing-snapshot folds projections/control-plane.
    expect(await boundaryProblems('modules/canonical/sample.ts', [
      "import { InferenceModule } from '../inference/index.js';",
      'export const used = InferenceModule;',
    ].join('\n'))).toEqual([expect.stringContaining('modules/canonical importing modules/inference closes a cycle (modules/canonical → modules/inference → modules/canonical)')]);
    expect(await boundaryProblems('projections/control-plane/sample.ts', [
      "import { RoutingSnapshotProjection } from '../routing-snapshot/index.js';",
      'export const used = RoutingSnapshotProjection;',
    ].join('\n'))).toEqual([expect.stringContaining('closes a cycle (projections/control-plane → projections/routing-snapshot → projections/control-plane)')]);
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

  it('accepts public surfaces down the layers, same-module internals, and the bootstrap wiring module and kernel internals', async () => {
    expect(await boundaryProblems('modules/inference/sample.ts', [
      "import { GatewayAuthenticator } from '../access/index.js';",
      "import { DomainError } from '../../src/kernel/index.js';",
      "import { ALIAS_EVENT_TYPES } from '../../events/index.js';",
      "import { RoutePlanner } from './routing/route-planner.js';",
      "import { RoutingSnapshotProjection } from '../../projections/routing-snapshot/index.js';",
      "import { ControlPlaneState } from '../../projections/control-plane/index.js';",
      'export const used = [GatewayAuthenticator, DomainError, ALIAS_EVENT_TYPES, RoutePlanner, RoutingSnapshotProjection, ControlPlaneState];',
    ].join('\n'))).toEqual([]);
    expect(await boundaryProblems('projections/key-index/sample.ts', [
      "import { tenantFold } from '../../events/index.js';",
      "import { ControlPlaneState } from '../control-plane/index.js';",
      'export const used = [tenantFold, ControlPlaneState];',
    ].join('\n'))).toEqual([]);
    expect(await boundaryProblems('src/sample.ts', [
      "import { priceDecider } from '../modules/catalog/price/price.decider.js';",
      "import { SqlEventStore } from './kernel/event-store/sql-event-store.js';",
      "import { KeyIndexProjection } from '../projections/key-index/index.js';",
      'export const used = [priceDecider, SqlEventStore, KeyIndexProjection];',
    ].join('\n'))).toEqual([]);
  });

  it("refuses the bootstrap importing a projection's internal file", async () => {
    expect(await boundaryProblems('src/sample.ts', [
      "import { KeyIndexProjection } from '../projections/key-index/key-index.projection.js';",
      'export const used = KeyIndexProjection;',
    ].join('\n'))).toEqual([expect.stringContaining('import projections/key-index through its public surface projections/key-index/index.js')]);
  });

  it('finds no cycle between areas and no import up the layers in the tree itself', async () => {
    const rule = await loadRule();
    expect(rule.LAYERS).toEqual(['migrations', 'kernel', 'events', 'projections', 'modules', 'bootstrap']);
    const graph = rule.areaGraph(root);
    // The graph is real: the areas are there, with the arrows the layers allow.
    expect(graph.get('modules/inference')?.has('projections/routing-snapshot')).toBe(true);
    expect(graph.get('projections/key-index')?.has('projections/control-plane')).toBe(true);
    expect(rule.areaCycles(graph)).toEqual([]);
    expect(rule.upwardImports(graph)).toEqual([]);
  });

  it('would see the cycle and the upward arrows issue 33 found, in a graph that has them', async () => {
    const rule = await loadRule();
    const graph = new Map([
      ['modules/access', new Map([['projections/key-index', ['modules/access/gateway-authenticator.ts -> projections/key-index/index.js']]])],
      ['projections/key-index', new Map([['projections/control-plane', ['projections/key-index/key-index.projection.ts -> projections/control-plane/index.js']]])],
      ['projections/control-plane', new Map([['modules/access', ['projections/control-plane/control-plane-state.ts -> modules/access/index.js']]])],
    ]);
    expect(rule.areaCycles(graph)).toEqual([['modules/access', 'projections/control-plane', 'projections/key-index']]);
    expect(rule.upwardImports(graph)).toEqual(['projections/control-plane/control-plane-state.ts -> modules/access/index.js']);
  });

});
