import { CONFIGURATION_STREAM } from '../../../events/index.js';
import { deciderCommand } from '../../kernel/index.js';
import { configurationDecider } from './configuration.decider.js';

/** The configuration stream's CQRS command (adoptions), dispatched through the CommandBus like the catalog's. */
export const ConfigurationCommand = deciderCommand('Configuration', configurationDecider, () => CONFIGURATION_STREAM);
