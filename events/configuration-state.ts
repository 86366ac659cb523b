import type { StateFold } from '../src/kernel/index.js';
import type { ConfigurationEvent } from './configuration-events.js';

/** What the configuration stream amounts to: every runtime edit already adopted, field by field. */
export interface ConfigurationState {
  /** `adoptionKey` of every adopted field. */
  adopted: ReadonlySet<string>;
}

/** One runtime edit (an event id) of one field of one stream: adopted once. */
export function adoptionKey(stream: string, field: string, eventId: string): string {
  return JSON.stringify([stream, field, eventId]);
}

export const configurationFold: StateFold<ConfigurationEvent, ConfigurationState> = {
  initialState: () => ({ adopted: new Set() }),

  // ConfigurationAdopted is the stream's one event type.
  evolve(state, event) {
    const adopted = new Set(state.adopted);
    for (const definition of event.data.definitions) {
      for (const field of definition.fields) adopted.add(adoptionKey(definition.stream, field.field, field.eventId));
    }
    return { adopted };
  },
};
