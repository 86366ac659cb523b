import { declareSettings } from '../setting-declaration.js';
import { DEFAULT_DATA_DIR } from '../settings.js';

/** Where the event log lives: a PostgreSQL server, or the embedded PGlite in a directory of its own. */
export const EVENT_STORE_ENVIRONMENT = declareSettings('src/kernel/event-store', {
  DATABASE_URL: {
    type: 'PostgreSQL URL',
    default: 'unset: embedded PGlite',
    meaning: 'PostgreSQL event store and read models. Needed for more than one process (SWITCHYARD_WORKERS above 1, SWITCHYARD_PROJECTOR=external, several nodes).',
  },
  SWITCHYARD_DATA_DIR: {
    type: 'directory, or `:memory:`',
    default: `\`./${DEFAULT_DATA_DIR}\``,
    meaning:
      'PGlite data directory (when DATABASE_URL is unset), the default root of the outage spool and of `file:` secrets (`secrets/`). ' +
      'PGlite runs with fsync off: a commit survives the process being killed, not an OS crash or power loss; deployments that must survive those use DATABASE_URL. ' +
      '`:memory:` keeps everything in memory (tests).',
  },
});
