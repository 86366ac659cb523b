import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiKeyCommand, ContentPolicyCommand, TenantCommand } from '../../../modules/access/access.commands.js';
import { AliasCommand, DeploymentCommand, PriceCommand, ProviderCommand } from '../../../modules/catalog/catalog.commands.js';
import { ControlPlaneState } from '../../../projections/control-plane/index.js';
import { KeyIndexProjection } from '../../../projections/key-index/index.js';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import type { CommandOutcome } from '../../kernel/commands/command-executor.js';
import { ProjectionRunner } from '../../kernel/projections/projection-runner.js';
import { SqlEventStore } from '../../kernel/event-store/sql-event-store.js';
import { type AdoptedDefinition, aliasStream, apiKeyStream, CONFIGURATION_STREAM, contentPolicyStream, deploymentStream, priceStream, providerStream, tenantStream } from '../../../events/index.js';
import type { DomainEvent } from '../../../events/event.js';
import { WrongExpectedVersionError } from '../../kernel/event-store/errors.js';
import type { GatewayConfig } from '../gateway-config.js';
import { type Adoption, type Drift, type PlannedStep, planApply } from './apply-plan.js';
import { ConfigurationCommand } from './configuration.commands.js';
import { type DefinitionFamily, type FieldHistory, fieldHistory } from './field-provenance.js';

export interface ApplyOptions {
  dryRun: boolean;
  prune: boolean;
  /** Recorded as the actor of every event (e.g. `config:switchyard.yaml`). */
  actor: string;
  /** Apply the file's value over runtime edits of settings too (PlanOptions.overwriteRuntimeEdits). */
  overwriteRuntimeEdits?: boolean;
  onProgress?: (done: number, total: number, step: PlannedStep) => void;
}

export interface ApplyResult {
  steps: PlannedStep[];
  /** Events appended (0 on a dry run or when nothing changed). */
  appended: number;
  /** Runtime edits the file disagrees with, left as they are (ApplyPlan.drift). */
  drift: Drift[];
  /** Runtime edits the file now says too (ApplyPlan.adoptions): recorded unless a dry run, and then the file's. */
  adoptions: Adoption[];
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
    private readonly store: SqlEventStore,
  ) {}

  async currentState(): Promise<ControlPlaneState> {
    await this.runner.catchUp([this.routing.name, this.keys.name]);
    return ControlPlaneState.combine(this.routing.state, this.keys.state);
  }

  async apply(config: GatewayConfig, options: ApplyOptions): Promise<ApplyResult> {
    const state = await this.currentState();
    const plan = await this.plan(config, state, options);
    if (plan.problems.length) throw new ApplyRefusedError(plan.problems);
    if (options.dryRun) return { steps: plan.steps, appended: 0, drift: plan.drift, adoptions: plan.adoptions };
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
    appended += await this.adopt(plan.adoptions, options.actor);
    return { steps: plan.steps, appended, drift: plan.drift, adoptions: plan.adoptions };
  }

  /**
   * One ConfigurationAdopted for every runtime edit the file now says too. The aggregate appends only what
   * is not adopted yet; a concurrent apply of the same file (two nodes starting) is a version conflict,
   * after which the decision is made again on what that apply recorded.
   */
  private async adopt(adoptions: readonly Adoption[], actor: string): Promise<number> {
    if (adoptions.length === 0) return 0;
    const byStream = new Map<string, AdoptedDefinition>();
    for (const adoption of adoptions) {
      const stream = streamOf(adoption.family, adoption.id);
      const definition = byStream.get(stream) ?? { stream, fields: [] };
      definition.fields.push({ field: adoption.tracked, eventId: adoption.adopts.eventId, actor: adoption.adopts.actor, recordedAt: adoption.adopts.at.toISOString() });
      byStream.set(stream, definition);
    }
    const command = { type: 'AdoptRuntimeEdits' as const, source: actor.replace(/^config:/, ''), definitions: [...byStream.values()] };
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome: CommandOutcome<DomainEvent> = await this.commands.execute(new ConfigurationCommand.Message(command, { now: new Date(), actor }));
        return outcome.events.length;
      } catch (error) {
        if (error instanceof WrongExpectedVersionError && attempt < 3) continue;
        throw new ApplyRefusedError([`recording that the file adopts ${adoptions.length} runtime edit(s) failed: ${(error as Error).message}`]);
      }
    }
  }

  /**
   * The plan with each declared definition's field history: a first pass finds which existing definitions
   * the file declares (the plan asks for their history), their streams are read, and the second pass
   * decides with who changed what.
   */
  private async plan(config: GatewayConfig, state: ControlPlaneState, options: ApplyOptions) {
    const planOptions = { now: new Date(), prune: options.prune, overwriteRuntimeEdits: options.overwriteRuntimeEdits ?? false };
    const asked = new Map<string, { family: DefinitionFamily; id: string }>();
    planApply(config, state, {
      ...planOptions,
      history: (family, id) => {
        asked.set(streamOf(family, id), { family, id });
        return new Map();
      },
    });
    // Every stream asked for and the configuration's own (its adoptions), in one read.
    const streams = await this.store.readStreams([...asked.keys(), CONFIGURATION_STREAM]);
    const adoptions = streams.get(CONFIGURATION_STREAM) ?? [];
    const histories = new Map<string, FieldHistory>();
    for (const [streamId, { family, id }] of asked) histories.set(streamId, fieldHistory(family, id, streams.get(streamId) ?? [], adoptions));
    return planApply(config, state, { ...planOptions, history: (family, id) => histories.get(streamOf(family, id)) ?? new Map() });
  }
}

/** The stream of a definition, as its aggregate names it. */
function streamOf(family: DefinitionFamily, id: string): string {
  switch (family) {
    case 'provider':
      return providerStream(id);
    case 'deployment':
      return deploymentStream(id);
    case 'price':
      return priceStream(id);
    case 'alias':
      return aliasStream(id);
    case 'tenant':
      return tenantStream(id);
    case 'apikey':
      return apiKeyStream(id);
    case 'content-policy':
      return contentPolicyStream(id);
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
    case 'content-policy':
      return new ContentPolicyCommand.Message(step.command, context);
  }
}
