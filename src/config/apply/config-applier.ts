import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiKeyCommand, TenantCommand } from '../../../modules/access/access.commands.js';
import { AliasCommand, DeploymentCommand, PriceCommand, ProviderCommand } from '../../../modules/catalog/catalog.commands.js';
import { ControlPlaneState } from '../../../projections/control-plane/control-plane-state.js';
import { KeyIndexProjection } from '../../../projections/key-index/key-index.projection.js';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/routing-snapshot.projection.js';
import type { CommandOutcome } from '../../kernel/commands/command-executor.js';
import { ProjectionRunner } from '../../kernel/projections/projection-runner.js';
import type { DomainEvent } from '../../../events/event.js';
import type { GatewayConfig } from '../gateway-config.js';
import { type PlannedStep, planApply } from './apply-plan.js';

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
}

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
  ) {}

  async currentState(): Promise<ControlPlaneState> {
    await this.runner.catchUp([this.routing.name, this.keys.name]);
    return ControlPlaneState.combine(this.routing.state, this.keys.state);
  }

  async apply(config: GatewayConfig, options: ApplyOptions): Promise<ApplyResult> {
    const plan = planApply(config, await this.currentState(), { now: new Date(), prune: options.prune });
    if (plan.problems.length) throw new ApplyRefusedError(plan.problems);
    if (options.dryRun) return { steps: plan.steps, appended: 0 };
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
    return { steps: plan.steps, appended };
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
