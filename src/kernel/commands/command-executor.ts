import type { DomainEvent } from './domain-event.js';
import { WrongExpectedVersionError } from '../event-store/errors.js';
import type { EventStore } from '../event-store/event-store.js';
import type { CommandContext, Decider } from './decider.js';

export interface CommandOutcome<Event extends DomainEvent> {
  events: Event[];
  /** Stream version after the command; equal to the previous one when nothing changed. */
  version: number;
  /** Global position of the last event appended (null when nothing changed): wait for it to read your writes. */
  position: number | null;
}

export interface ExecuteOptions {
  /** If-Match: the version the caller last saw; a mismatch is a WrongExpectedVersionError (409). */
  expectedVersion?: number;
  correlationId?: string;
}

/** Inspects a command's new events before they are appended; throws to refuse them (safe publication). */
export type AppendGuard = (streamId: string, events: readonly DomainEvent[]) => void | Promise<void>;

/**
 * Loads a stream, folds it, decides, and appends with the version it read — holding no business rule.
 */
export class CommandExecutor {
  private guard: AppendGuard | null = null;

  constructor(private readonly store: EventStore) {}

  setGuard(guard: AppendGuard): void {
    this.guard = guard;
  }

  async load<Event extends DomainEvent, State>(
    streamId: string,
    decider: Decider<unknown, Event, State>,
  ): Promise<{ state: State; version: number }> {
    const recorded = await this.store.readStream(streamId);
    let state = decider.initialState();
    for (const event of recorded) state = decider.evolve(state, { type: event.type, data: event.data } as Event);
    return { state, version: recorded.length ? recorded[recorded.length - 1].streamVersion : 0 };
  }

  async execute<Command, Event extends DomainEvent, State>(
    streamId: string,
    decider: Decider<Command, Event, State>,
    command: Command,
    context: CommandContext,
    options: ExecuteOptions = {},
  ): Promise<CommandOutcome<Event>> {
    const { state, version } = await this.load(streamId, decider as Decider<unknown, Event, State>);
    if (options.expectedVersion !== undefined && options.expectedVersion !== version) {
      throw new WrongExpectedVersionError(streamId, options.expectedVersion, version);
    }
    const events = decider.decide(command, state, context);
    if (events.length === 0) return { events, version, position: null };
    await this.guard?.(streamId, events);
    const result = await this.store.append({
      streamId,
      expectedVersion: options.expectedVersion ?? version,
      events: events.map((event) => ({
        type: event.type,
        data: event.data,
        metadata: {
          actor: context.actor, ...(context.actorRole ? { actorRole: context.actorRole } : {}), correlationId: options.correlationId, recordedBy: 'command',
        },
      })),
    });
    return { events, version: result.nextExpectedVersion, position: result.positions.at(-1) ?? null };
  }
}
