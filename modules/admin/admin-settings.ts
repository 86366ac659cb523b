/** DI token of the admin context's settings. */
export const ADMIN_SETTINGS = Symbol('ADMIN_SETTINGS');

export interface AdminSettings {
  /** ADMIN_TOKEN; null = generate one on the first start and store only its hash. */
  adminToken: string | null;
}

export function readAdminSettings(env: NodeJS.ProcessEnv): AdminSettings {
  return { adminToken: env.ADMIN_TOKEN || null };
}
