import type { KeyScope } from '../../events/index.js';

/** A gateway key accepted on the admin API: its id, its tenant and what it holds. */
export interface AdminKey {
  keyId: string;
  tenantId: string;
  scopes: readonly KeyScope[];
  /** Aliases the key may call; null = every alias. */
  aliases: readonly string[] | null;
}

/**
 * What the admin guard needs from access control: a gateway key that carries the `admin` or the
 * `admin:platform` scope, or the key's own 401/403 (a GatewayError). A port, so the admin context does
 * not depend on access (whose controllers depend on admin); access binds it to its authenticator.
 */
export abstract class AdminKeyVerifier {
  abstract authenticateAdmin(headers: Record<string, string | string[] | undefined>): AdminKey;
}
