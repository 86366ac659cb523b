import type { DomainEvent } from '../../events/event.js';
import { type CommandContext, type Decider, DomainError } from '../../src/kernel/commands/decider.js';

/** The instant every spec runs at unless a `when` says otherwise: time is an input, never the clock. */
export const SPEC_NOW = new Date('2026-01-15T12:00:00.000Z');

/**
 * Emmett-style specifications for a decider: `given(history).when(command).then(events)`, or
 * `.thenNothing()` for an idempotent no-op, or `.thenThrows(code, status)` for a refused transition.
 * The history is folded with the decider's own `evolve`, exactly as the command executor does.
 */
export function deciderSpec<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>) {
  return {
    given(history: readonly Event[] = []) {
      return {
        when(command: Command, context: Partial<CommandContext> = {}) {
          const run = (): Event[] => {
            const state = history.reduce((current, event) => decider.evolve(current, event), decider.initialState());
            return decider.decide(command, state, { now: SPEC_NOW, actor: 'spec', ...context });
          };
          return {
            then(expected: readonly Event[]): void {
              expect(run()).toEqual(expected);
            },
            thenNothing(): void {
              expect(run()).toEqual([]);
            },
            thenThrows(code: string, status?: DomainError['status']): DomainError {
              let caught: unknown;
              try {
                run();
              } catch (error) {
                caught = error;
              }
              if (!(caught instanceof DomainError)) {
                throw new Error(`expected DomainError ${code}, got ${caught === undefined ? 'no error' : String(caught)}`);
              }
              expect({ code: caught.code, status: caught.status }).toEqual({ code, status: status ?? caught.status });
              expect(caught.message.length).toBeGreaterThan(10);
              return caught;
            },
          };
        },
      };
    },
  };
}
