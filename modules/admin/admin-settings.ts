import { type SettingsEnv, declareSettings, textSetting } from '../../src/kernel/index.js';

/** DI token of the admin context's settings. */
export const ADMIN_SETTINGS = Symbol('ADMIN_SETTINGS');

export interface AdminSettings {
  /** ADMIN_TOKEN; null = generate one on the first start and store only its hash. */
  adminToken: string | null;
}

export const ADMIN_ENVIRONMENT = declareSettings('modules/admin', {
  ADMIN_TOKEN: {
    type: 'text, at least 16 characters',
    default: 'unset: generated on the first start, printed once, stored hashed',
    meaning: 'the admin API token. Lost the generated one? `switchyard admin-token reset` (with every server stopped)',
  },
});

export function readAdminSettings(env: SettingsEnv): AdminSettings {
  return { adminToken: textSetting(env, ADMIN_ENVIRONMENT.ADMIN_TOKEN) || null };
}
