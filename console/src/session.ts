import { api, ApiError, useCsrfToken } from './api.js';

/** The console session as the server describes it (POST/GET /console/api/session). */
export interface Session {
  user: string;
  role: 'admin' | 'operator' | 'finance' | 'auditor' | 'viewer';
  csrfToken: string;
  idleExpiresAt: string;
  expiresAt: string;
}

export interface SignInConfig {
  signIn: { token: boolean; oidc: null | { name: string } };
}

export async function currentSession(): Promise<Session | null> {
  try {
    return adopt(await api<Session>('/console/api/session'));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export async function signInWithToken(token: string): Promise<Session> {
  return adopt(await api<Session>('/console/api/session', { method: 'POST', body: { token } }));
}

export async function signOut(): Promise<void> {
  try {
    await api<void>('/console/api/session', { method: 'DELETE' });
  } finally {
    useCsrfToken(null);
  }
}

export function signInConfig(): Promise<SignInConfig> {
  return api<SignInConfig>('/console/api/config');
}

function adopt(session: Session): Session {
  useCsrfToken(session.csrfToken);
  return session;
}

/** Roles that may change something (the server decides; the page only avoids offering what will be refused). */
export function canChange(session: Session, area: 'catalog' | 'access'): boolean {
  return session.role === 'admin' || (session.role === 'operator' && (area === 'catalog' || area === 'access'));
}
