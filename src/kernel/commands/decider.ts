import type { DomainEvent } from './domain-event.js';

/** Facts a command carries besides its payload: who and when (time never comes from the clock inside logic). */
export interface CommandContext {
  now: Date;
  actor: string;
}

/**
 * An aggregate as three pure functions (Emmett style): `decide` returns the events a command causes
 * (or throws a DomainError), `evolve` folds one event into the state.
 */
export interface Decider<Command, Event extends DomainEvent, State> {
  initialState(): State;
  decide(command: Command, state: State, context: CommandContext): Event[];
  evolve(state: State, event: Event): State;
}

/** A rule of the domain refused the command. `code` is stable; the message names what to fix. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly code: string,
    message: string,
    /** HTTP status an API maps it to: 404 not found, 409 state conflict, 422 invalid. */
    readonly status: 404 | 409 | 422 = 409,
  ) {
    super(message);
  }
}

export function assertNever(value: never): never {
  throw new Error(`Unhandled case: ${JSON.stringify(value)}`);
}
