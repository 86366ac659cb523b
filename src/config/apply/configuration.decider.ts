import { adoptionKey, type AdoptedDefinition, type ConfigurationEvent, configurationFold, type ConfigurationState } from '../../../events/index.js';
import type { Decider } from '../../kernel/index.js';

export type ConfigurationCommand =
  /** Record that the file `source` now says what these runtime edits set (apply-plan.ts finds them). */
  { type: 'AdoptRuntimeEdits'; source: string; definitions: AdoptedDefinition[] };

/**
 * The configuration's own stream: adoptions. Each runtime edit of a field is adopted once; asking again
 * (the same file applied again, two nodes starting with one file) appends nothing.
 */
export const configurationDecider: Decider<ConfigurationCommand, ConfigurationEvent, ConfigurationState> = {
  initialState: configurationFold.initialState,
  evolve: configurationFold.evolve,

  decide(command, state) {
    const definitions = command.definitions
      .map((definition) => ({
        stream: definition.stream,
        fields: definition.fields.filter((field) => !state.adopted.has(adoptionKey(definition.stream, field.field, field.eventId))),
      }))
      .filter((definition) => definition.fields.length > 0);
    return definitions.length ? [{ type: 'ConfigurationAdopted', data: { source: command.source, definitions } }] : [];
  },
};
