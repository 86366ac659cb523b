import { declareSettings } from './kernel/setting-declaration.js';
import { type SettingsEnv, textSetting } from './kernel/settings.js';

/** The conventions terminals and CI systems share (https://no-color.org, FORCE_COLOR), honoured by every log Switchyard writes. */
export const LOG_COLOUR_ENVIRONMENT = declareSettings('src', {
  NO_COLOR: {
    type: 'any non-empty value',
    default: 'unset',
    meaning: 'no colour codes in logs even when they go to a terminal (logs to a file, a pipe, journald or `docker logs` never have them)',
  },
  FORCE_COLOR: {
    type: 'any value but `0`',
    default: 'unset',
    meaning: 'colour codes in logs wherever they go (e.g. a CI log viewer that renders them)',
  },
});

/**
 * Colour only for a person at a terminal: a log file, journald, `docker logs` or a pipe gets plain text with no
 * escapes to strip. NO_COLOR turns colour off at a terminal too; FORCE_COLOR (not `0`) turns it on anywhere.
 */
export function colouredFor(stream: Pick<NodeJS.WriteStream, 'isTTY'>, env: SettingsEnv = process.env): boolean {
  const force = textSetting(env, LOG_COLOUR_ENVIRONMENT.FORCE_COLOR);
  if (force !== undefined && force !== '' && force !== '0') return true;
  const none = textSetting(env, LOG_COLOUR_ENVIRONMENT.NO_COLOR);
  if (none !== undefined && none !== '') return false;
  return stream.isTTY === true;
}
