import { SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

/**
 * The console's roles (issue 38). A session carries exactly one; the admin token and gateway keys carry
 * none (they keep the authority they always had).
 */
export const CONSOLE_ROLES = ['admin', 'operator', 'finance', 'auditor', 'viewer'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

export function isConsoleRole(value: string): value is ConsoleRole {
  return (CONSOLE_ROLES as readonly string[]).includes(value);
}

/**
 * What an admin route is about. A route's area decides which console roles may read it and which may
 * change through it; a route without one is the admin role's alone (fail closed).
 */
export const ADMIN_AREAS = [
  'catalog', 'providers', 'access', 'budgets', 'limits', 'content-policies', 'cache', 'config', 'analytics', 'history', 'audit', 'status', 'projections',
] as const;
export type AdminAreaName = (typeof ADMIN_AREAS)[number];

/** Whether a request reads or changes. Reads are GET and HEAD, unless a route is marked as a read (audit verify). */
export type AdminAccess = 'read' | 'change';

export interface AdminAreaMark {
  area: AdminAreaName;
  /** Set on a route whose method is not GET but which changes nothing (a verification sent as POST). */
  access?: AdminAccess;
}

/**
 * The role matrix: per role, the areas it reads and the areas it changes. The admin role is not listed:
 * it may do everything the admin token may. Routes only the admin token may call (AdminTokenOnly:
 * provider credentials and base URLs, applying a configuration) stay the admin role's whatever their area.
 */
const ROLE_MATRIX: Readonly<Record<Exclude<ConsoleRole, 'admin'>, { reads: readonly AdminAreaName[]; changes: readonly AdminAreaName[] }>> = {
  // Provider routes never answer credentials, so an operator reads them; it changes what runs, not where secrets go.
  operator: {
    reads: ADMIN_AREAS,
    changes: ['catalog', 'providers', 'access', 'budgets', 'limits', 'content-policies', 'cache'],
  },
  finance: { reads: ['analytics', 'access', 'budgets', 'status'], changes: [] },
  auditor: { reads: ['history', 'audit', 'status'], changes: [] },
  viewer: { reads: ADMIN_AREAS, changes: [] },
};

const ADMIN_AREA = 'switchyard.admin.area';

/**
 * Classifies an admin controller or route for the console's roles. Put it on the controller; a handler's
 * own mark overrides it (e.g. a tenant's budget routes inside the tenants controller). `access: 'read'`
 * marks a POST that changes nothing.
 */
export const AdminArea = (area: AdminAreaName, options: { access?: AdminAccess } = {}) =>
  SetMetadata(ADMIN_AREA, { area, ...(options.access ? { access: options.access } : {}) } satisfies AdminAreaMark);

/** The route's area mark, or undefined when it has none (then only the admin role may use it). */
export function adminAreaOf(reflector: Reflector, handler: object, controller: object): AdminAreaMark | undefined {
  return reflector.getAllAndOverride<AdminAreaMark | undefined>(ADMIN_AREA, [handler as () => void, controller as () => void]);
}

/** Whether a request with `method` to a route marked `mark` reads or changes. */
export function accessOf(method: string, mark: AdminAreaMark | undefined): AdminAccess {
  if (mark?.access) return mark.access;
  return method === 'GET' || method === 'HEAD' ? 'read' : 'change';
}

/**
 * The roles that may make such a request, strongest first: the admin role always; the others per the
 * matrix, and never on an unclassified route or one only the admin token may call.
 */
export function rolesAllowed(mark: AdminAreaMark | undefined, access: AdminAccess, adminTokenOnly: boolean): ConsoleRole[] {
  const roles: ConsoleRole[] = ['admin'];
  if (mark === undefined || adminTokenOnly) return roles;
  for (const [role, grant] of Object.entries(ROLE_MATRIX) as Array<[Exclude<ConsoleRole, 'admin'>, (typeof ROLE_MATRIX)['viewer']]>) {
    if ((access === 'read' ? grant.reads : grant.changes).includes(mark.area)) roles.push(role);
  }
  return roles;
}
