import type { DomainEvent } from '../../events/event.js';
import { ControlPlaneState } from '../../projections/control-plane/control-plane-state.js';
import { type ApplyPlan, type PlannedStep, type PlanOptions, planApply } from '../../src/config/apply/apply-plan.js';
import { configurationDecider } from '../../src/config/apply/configuration.decider.js';
import { fieldHistory } from '../../src/config/apply/field-provenance.js';
import type { GatewayConfig } from '../../src/config/gateway-config.js';
import type { RecordedEvent } from '../../src/kernel/event-store/event-store.js';
import { decidePlannedStep } from './planned-steps.js';

/** The instant plans are made at and the log's clock starts from. */
export const PLAN_LOG_NOW = new Date('2026-03-01T00:00:00Z');
const NOW = PLAN_LOG_NOW;

/**
 * An event store in memory: the control-plane state and each stream's recorded events with their actor
 * and time, so that plans see who changed what as they do against a real store.
 */
export class PlanLog {
  private recorded = new Map<string, RecordedEvent[]>();
  private clock = NOW.getTime();
  state = ControlPlaneState.empty();

  record(streamId: string, events: DomainEvent[], actor: string): this {
    const stream = this.recorded.get(streamId) ?? [];
    for (const event of events) {
      this.clock += 1000;
      stream.push({
        globalPosition: 0, transactionId: 0n as never, streamId, streamVersion: stream.length + 1, eventId: `${streamId}-${stream.length + 1}`,
        type: event.type, schemaVersion: 1, data: event.data, metadata: { actor }, recordedAt: new Date(this.clock),
      });
    }
    this.recorded.set(streamId, stream);
    this.state = this.state.with(streamId, events);
    return this;
  }

  /** The steps, each decided by its aggregate as the command handlers would, recorded as `actor`'s. */
  run(steps: PlannedStep[], actor = 'config:test.yaml'): this {
    for (const step of steps) {
      const [streamId, events] = decidePlannedStep(this.state, step, { now: NOW, actor });
      this.record(streamId, events, actor);
    }
    return this;
  }

  plan(config: GatewayConfig, options: Partial<PlanOptions> = {}) {
    const adoptions = this.recorded.get('configuration') ?? [];
    return planApply(config, this.state, {
      now: NOW, prune: false, ...options, history: (family, id) => fieldHistory(family, id, this.recorded.get(`${family}-${id}`) ?? [], adoptions),
    });
  }

  /** The plan's adoptions, decided by the configuration aggregate as ConfigApplier sends them; the events it appended. */
  adopt(plan: ApplyPlan, actor = 'config:test.yaml'): DomainEvent[] {
    const byStream = new Map<string, { stream: string; fields: Array<{ field: string; eventId: string; actor: string; recordedAt: string }> }>();
    for (const a of plan.adoptions) {
      const stream = `${a.family}-${a.id}`;
      const definition = byStream.get(stream) ?? { stream, fields: [] };
      definition.fields.push({ field: a.tracked, eventId: a.adopts.eventId, actor: a.adopts.actor, recordedAt: a.adopts.at.toISOString() });
      byStream.set(stream, definition);
    }
    let state = configurationDecider.initialState();
    for (const event of this.recorded.get('configuration') ?? []) state = configurationDecider.evolve(state, event as never);
    const events = configurationDecider.decide({ type: 'AdoptRuntimeEdits', source: actor.slice('config:'.length), definitions: [...byStream.values()] }, state, { now: NOW, actor });
    this.record('configuration', events, actor);
    return events;
  }

  copy(): PlanLog {
    const log = new PlanLog();
    log.recorded = new Map([...this.recorded].map(([id, events]) => [id, [...events]]));
    log.clock = this.clock;
    log.state = this.state;
    return log;
  }
}

