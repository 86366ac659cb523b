import { type KeyScope, PLATFORM_SCOPE } from '../../events/index.js';
import type { KeyIndexProjection, Principal } from '../../projections/key-index/index.js';
import type { AdminKey, AdminKeyVerifier } from '../admin/index.js';
import { GatewayError, type HeaderMap, firstHeader } from '../canonical/index.js';
import { RequestScoped } from '../../src/kernel/index.js';
import { hashApiKey } from './api-key/key-format.js';

type Headers = HeaderMap;

/**
 * Gateway keys arrive as `Authorization: Bearer sk-sy-…` (OpenAI clients) or `x-api-key` (Anthropic
 * clients). The key is hashed and looked up in the per-node key index; it is never logged or stored.
 */
export class GatewayAuthenticator implements AdminKeyVerifier {
  constructor(
    private readonly keys: KeyIndexProjection,
    private readonly now: () => number = Date.now,
  ) {}

  authenticate(headers: Headers, scope: KeyScope): Principal {
    const principal = this.verified(headers);
    if (!principal.scopes.has(scope)) {
      throw new GatewayError(403, 'insufficient_scope', `This API key lacks the '${scope}' scope.`);
    }
    return principal;
  }

  /**
   * The admin guard's port (AdminKeyVerifier): a key with `admin` (its own tenant) or `admin:platform`
   * (every tenant); the guard decides what each may reach.
   */
  authenticateAdmin(headers: Headers): AdminKey {
    const principal = this.verified(headers);
    if (!principal.scopes.has('admin') && !principal.scopes.has(PLATFORM_SCOPE)) {
      throw new GatewayError(403, 'insufficient_scope', "This API key lacks the 'admin' scope.");
    }
    return { keyId: principal.keyId, tenantId: principal.tenantId, scopes: [...principal.scopes], aliases: principal.aliases ? [...principal.aliases] : null };
  }

  /** The principal of a presented key that exists, has not expired and whose tenant is not suspended; its scopes are the caller's to check. */
  private verified(headers: Headers): Principal {
    const presented = presentedKey(headers);
    if (!presented) {
      throw new GatewayError(401, 'invalid_api_key', 'Missing API key. Send it as "Authorization: Bearer <key>" or "x-api-key: <key>".');
    }
    const principal = this.keys.lookup(hashOf(headers, presented));
    if (!principal) throw new GatewayError(401, 'invalid_api_key', 'Incorrect API key provided.');
    if (principal.expiresAt !== null && principal.expiresAt <= this.now()) {
      if (principal.rotatedAt !== undefined && principal.rotatedAt <= this.now()) {
        throw new GatewayError(401, 'invalid_api_key', "This API key's secret was rotated and its overlap has ended; use the new secret.");
      }
      throw new GatewayError(401, 'invalid_api_key', 'This API key has expired.');
    }
    if (principal.tenant.status === 'suspended') {
      throw new GatewayError(403, 'tenant_suspended', 'The tenant this key belongs to is suspended.');
    }
    return principal;
  }
}

/**
 * A request is authenticated twice (before its body is read, and again by its pipeline), from the
 * same headers object: the second time reuses the first's hash of the same key instead of hashing it
 * again. Every check after the lookup runs each time; nothing outlives the request's headers.
 */
const hashes = new RequestScoped<Headers, { presented: string; hash: string }>('switchyard.keyHash');

function hashOf(headers: Headers, presented: string): string {
  const known = hashes.get(headers);
  if (known?.presented === presented) return known.hash;
  const hash = hashApiKey(presented);
  hashes.set(headers, { presented, hash });
  return hash;
}

function presentedKey(headers: Headers): string | null {
  const authorization = firstHeader(headers.authorization);
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  return firstHeader(headers['x-api-key']) ?? null;
}
