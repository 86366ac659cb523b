import { DomainError } from '../../../src/kernel/index.js';
import { readPriceMap } from './litellm-price-map.js';
import { type CatalogPrices, type DeploymentPriceImport, planPriceImport } from './price-import-plan.js';
import { type PriceCommand, priceDecider } from './price.decider.js';

export interface PriceImportOptions {
  dryRun: boolean;
  /** When the imported prices start (the admin API's and `--effective-from`'s default: now). */
  effectiveFrom: Date;
  /** List the map's entries that match no deployment (otherwise only counted). */
  verbose: boolean;
  now: Date;
}

/** Sends one SchedulePrice the way its caller does (the admin API with the request's actor, the CLI with its own). */
export type SchedulePrice = (command: PriceCommand) => Promise<{ events: readonly unknown[]; version: number }>;

export type ImportedDeployment = DeploymentPriceImport & {
  /** The price version the import appended (absent in a dry run and where nothing was scheduled). */
  priceVersion?: number;
};

/** What `POST /admin/v1/prices/import` answers and `switchyard prices import` prints. */
export interface PriceImportReport {
  dryRun: boolean;
  effectiveFrom: string;
  deployments: ImportedDeployment[];
  counts: { schedule: number; unchanged: number; noEntry: number; ambiguous: number; unmatchedEntries: number; unpricedEntries: number };
  /** With `verbose`: the map's priced entries that match no deployment. */
  unmatchedEntries?: string[];
}

/**
 * Imports a LiteLLM price map: reads and checks the whole map, plans a price version per matched
 * deployment, checks every planned version against its aggregate's rules, and only then schedules them
 * through `schedule` (one SchedulePrice per deployment, the actor recorded by the caller's command path).
 * A malformed map, or a version the aggregate would refuse, refuses the import before anything is
 * appended. The import never removes a price: a deployment without a price still cannot serve.
 */
export async function importPrices(map: unknown, catalog: CatalogPrices, options: PriceImportOptions, schedule: SchedulePrice): Promise<PriceImportReport> {
  const plan = planPriceImport(readPriceMap(map), catalog, options.effectiveFrom);
  const commands: Array<[DeploymentPriceImport, PriceCommand]> = [];
  for (const change of plan.deployments) {
    if (change.outcome !== 'schedule') continue;
    const command: PriceCommand = { type: 'SchedulePrice', deploymentId: change.deployment, effectiveFrom: options.effectiveFrom, table: change.proposed };
    try {
      priceDecider.decide(command, catalog.prices.get(change.deployment) ?? priceDecider.initialState(), { now: options.now, actor: 'price-import-check' });
    } catch (error) {
      if (error instanceof DomainError) throw new DomainError(error.code, `Deployment ${change.deployment}: ${error.message}. Nothing was imported.`, error.status);
      throw error;
    }
    commands.push([change, command]);
  }
  const versions = new Map<string, number>();
  if (!options.dryRun) {
    for (const [change, command] of commands) {
      const outcome = await schedule(command);
      if (outcome.events.length) versions.set(change.deployment, outcome.version);
    }
  }
  const count = (outcome: DeploymentPriceImport['outcome']) => plan.deployments.filter((d) => d.outcome === outcome).length;
  return {
    dryRun: options.dryRun,
    effectiveFrom: options.effectiveFrom.toISOString(),
    deployments: plan.deployments.map((change) => (versions.has(change.deployment) ? { ...change, priceVersion: versions.get(change.deployment)! } : change)),
    counts: {
      schedule: count('schedule'), unchanged: count('unchanged'), noEntry: count('no-entry'), ambiguous: count('ambiguous'),
      unmatchedEntries: plan.unmatchedEntries.length, unpricedEntries: plan.unpricedEntries.length,
    },
    ...(options.verbose ? { unmatchedEntries: plan.unmatchedEntries } : {}),
  };
}
