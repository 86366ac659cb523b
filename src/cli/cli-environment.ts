import { declareSettings } from '../kernel/setting-declaration.js';

/** What the one-shot commands read besides the serving settings. */
export const CLI_ENVIRONMENT = declareSettings('src/cli', {
  DEBUG: {
    type: 'any non-empty value',
    default: 'unset',
    meaning: "a failed `switchyard` command also prints the error's stack trace on stderr",
  },
});
