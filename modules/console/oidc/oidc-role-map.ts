import { type ConsoleRole, CONSOLE_ROLES, isConsoleRole } from '../../admin/index.js';
import { ConfigurationError } from '../../../src/kernel/index.js';

/** Claim value (a group or role name at the issuer) → console role. */
export type OidcRoleMap = ReadonlyMap<string, ConsoleRole>;

/** `switchyard-admins=admin,finance-team=finance` → the map; a role that does not exist is a configuration error. */
export function parseOidcRoleMap(text: string, settingName: string): OidcRoleMap {
  const map = new Map<string, ConsoleRole>();
  for (const entry of text.split(',').map((part) => part.trim()).filter(Boolean)) {
    const separator = entry.lastIndexOf('=');
    const value = separator > 0 ? entry.slice(0, separator).trim() : '';
    const role = separator > 0 ? entry.slice(separator + 1).trim() : '';
    if (!value || !isConsoleRole(role)) {
      throw new ConfigurationError(`${settingName}: "${entry}" must be <claim value>=<role>, the role one of ${CONSOLE_ROLES.join(', ')}`);
    }
    map.set(value, role);
  }
  return map;
}

/**
 * The role a user's claim values give: the strongest mapped one (the order of CONSOLE_ROLES), or null
 * when none is mapped. The claim may be one string or an array of strings; anything else maps nothing.
 */
export function roleFromClaim(claim: unknown, map: OidcRoleMap): ConsoleRole | null {
  const values = typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim.filter((v): v is string => typeof v === 'string') : [];
  const granted = new Set(values.map((value) => map.get(value)).filter((role): role is ConsoleRole => role !== undefined));
  return CONSOLE_ROLES.find((role) => granted.has(role)) ?? null;
}
