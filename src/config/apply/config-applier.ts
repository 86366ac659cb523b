import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiKeyCommand, TenantCommand } from '../../../modules/access/access.commands.js';
import { AliasCommand, DeploymentCommand, PriceCommand, ProviderCommand } from '../../../modules/catalog/catalog.commands.js';
import { ControlPlaneState } from '../../../projections/control-plane/index.js';
import { KeyIndexProjection } from '../../../projections/key-index/index.js';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import type { CommandOutcome } from '../../kernel/commands/command-executor.js';
import { ProjectionRunner } from '../../kernel/projections/projection-runner.js';
import { SqlEventStore } from '../../kernel/event-store/sql-event-store.js';
import { deploymentStream } from '../../../events/deployment-events.js';
import type { DomainEvent } from '../../../events/event.js';
import { tenantStream } from '../../../events/tenant-events.js';
import type { GatewayConfig } from '../gateway-config.js';
import { type ConfigurationOwned, type PlannedStep, planApply } from './apply-plan.js';

export interface ApplyOptions {
  dryRun: boolean;
  prune: boolean;
  /** Recorded as the actor of every event (e.g. `config:switchyard.yaml`). */
  actor: string;
  onProgress?: (done: number, total: number, step: PlannedStep) => void;
}

export interface ApplyResult {
  steps: PlannedStep[];
  /** Events appended (0 on a dry run or when nothing changed). */
  appended: number;
  /** Runtime lifecycle the file disagrees with and apply left alone (ApplyPlan.drift). */
  drift: string[];
}

/** Events of configuration applies carry an actor of this form (`config:switchyard.yaml`). */
const CONFIGURATION_ACTOR = /^config:/;

export class ApplyRefusedError extends Error {
  override readonly name = 'ApplyRefusedError';
  constructor(readonly problems: string[]) {
    super(`The configuration cannot be applied:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/**
 * `apply`: diff the desired configuration against the projections and send only the commands needed,
 * one at a time through the CommandBus (so each passes its aggregate's rules and safe publication).
 */
@Injectable()
export class ConfigApplier {
  constructor(
    private readonly commands: CommandBus,
    private readonly runner: ProjectionRunner,
    private readonly routing: RoutingSnapshotProjection,
    private readonly keys: KeyIndexProjection,
    private readonly store: SqlEventStore,
  ) {}

  async currentState(): Promise<ControlPlaneState> {
    await this.runner.catchUp([this.routing.name, this.keys.name]);
    return ControlPlaneState.combine(this.routing.state, this.keys.state);
  }

  async apply(config: GatewayConfig, options: ApplyOptions): Promise<ApplyResult> {
    const state = await this.currentState();
    const plan = planApply(config, state, { now: new Date(), prune: options.prune, configurationOwned: await this.configurationOwned(config, state) });
    if (plan.problems.length) throw new ApplyRefusedError(plan.problems);
    if (options.dryRun) return { steps: plan.steps, appended: 0, drift: plan.drift };
    let appended = 0;
    for (const [index, step] of plan.steps.entries()) {
      const context = { now: new Date(), actor: options.actor };
      let outcome: CommandOutcome<DomainEvent>;
      try {
        outcome = await this.commands.execute(message(step, context));
      } catch (error) {
        throw new ApplyRefusedError([`${step.path}: ${step.summary} failed: ${(error as Error).message}`]);
      }
      appended += outcome.events.length;
      // The next step's checks (and the caller) must see this one.
      if (outcome.position !== null) await this.runner.waitForEvent([this.routing.name, this.keys.name], outcome.position);
      options.onProgress?.(index + 1, plan.steps.length, step);
    }
    return { steps: plan.steps, appended, drift: plan.drift };
  }

  /**
   * Which of the declared, currently stopped deployments and tenants an earlier apply stopped: the last
   * disabling (suspending) event's actor says who did it. Only those streams are read.
   */
  private async configurationOwned(config: GatewayConfig, state: ControlPlaneState): Promise<ConfigurationOwned> {
    const byConfiguration = async (streamId: string, stopType: string): Promise<boolean> => {
      const events = await this.store.readStream(streamId);
      const stop = events.findLast((event) => event.type === stopType);
      return stop !== undefined && CONFIGURATION_ACTOR.test(stop.metadata.actor ?? '');
    };
    const disabledDeployments = new Set<string>();
    for (const d of config.deployments) {
      if (state.deployments.get(d.id)?.status === 'disabled' && (await byConfiguration(deploymentStream(d.id), 'DeploymentDisabled'))) disabledDeployments.add(d.id);
    }
    const suspendedTenants = new Set<string>();
    for (const t of config.tenants) {
      if (state.tenants.get(t.id)?.status === 'suspended' && (await byConfiguration(tenantStream(t.id), 'TenantSuspended'))) suspendedTenants.add(t.id);
    }
    return { disabledDeployments, suspendedTenants };
  }
}

function message(step: PlannedStep, context: { now: Date; actor: string }) {
  switch (step.family) {
    case 'provider':
      return new ProviderCommand.Message(step.command, context);
    case 'deployment':
      return new DeploymentCommand.Message(step.command, context);
    case 'price':
      return new PriceCommand.Message(step.command, context);
    case 'alias':
      return new AliasCommand.Message(step.command, context);
    case 'tenant':
      return new TenantCommand.Message(step.command, context);
    case 'apikey':
      return new ApiKeyCommand.Message(step.command, context);
  }
}
