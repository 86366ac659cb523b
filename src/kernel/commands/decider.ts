import type { DomainEvent } from './domain-event.js';

/** Facts a command carries besides its payload: who and when (time never comes from the clock inside logic). */
export interface CommandContext {
  now: Date;
  actor: string;
  /** The console role the actor acted in (`actor` is then `console:<user>`); recorded beside the actor. */
  actorRole?: string;
}

/**
 * What a stream's events amount to: the state before the first event, and `evolve`, which folds one event
 * into it. The command side (a Decider) and the projections that read the same state fold with the same
 * one, so they never disagree about what an event means.
 */
export interface StateFold<Event extends DomainEvent, State> {
  initialState(): State;
  evolve(state: State, event: Event): State;
}

/**
 * An aggregate as three pure functions (Emmett style): `decide` returns the events a command causes
 * (or throws a DomainError), `evolve` folds one event into the state (its StateFold's).
 */
export interface Decider<Command, Event extends DomainEvent, State> extends StateFold<Event, State> {
  decide(command: Command, state: State, context: CommandContext): Event[];
}

/** A rule of the domain refused the command. `code` is stable; the message names what to fix. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly code: string,
    message: string,
    /** HTTP status an API maps it to: 400 a reference to nothing usable, 404 not found, 409 state conflict, 422 invalid. */
    readonly status: 400 | 404 | 409 | 422 = 409,
  ) {
    super(message);
  }
}

export function assertNever(value: never): never {
  throw new Error(`Unhandled case: ${JSON.stringify(value)}`);
}
