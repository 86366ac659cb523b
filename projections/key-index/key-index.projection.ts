import { API_KEY_EVENT_TYPES, TENANT_EVENT_TYPES } from '../../events/index.js';
import type { InMemoryProjection, LogPosition, RecordedEvent } from '../../src/kernel/index.js';
import { ControlPlaneState } from '../control-plane/index.js';
import type { Principal } from './principal.js';

export const ACCESS_EVENT_TYPES: readonly string[] = [...TENANT_EVENT_TYPES, ...API_KEY_EVENT_TYPES];

/**
 * Per node, in memory: sha256(key) → principal. Revoked and expired keys leave the index as soon as
 * their event is read, which (with LISTEN/NOTIFY) is well within a second on every node.
 */
export class KeyIndexProjection implements InMemoryProjection {
  readonly name = 'key-index';
  readonly eventTypes = ACCESS_EVENT_TYPES;
  private access = ControlPlaneState.empty();
  private index: ReadonlyMap<string, Principal> = new Map();
  private position = 0;

  get state(): ControlPlaneState {
    return this.access;
  }

  get version(): number {
    return this.position;
  }

  /** Exact lookup by the key's SHA-256 (hex); callers hash the presented key first. */
  lookup(hash: string): Principal | undefined {
    return this.index.get(hash);
  }

  apply(events: readonly RecordedEvent[], _position: LogPosition): void {
    this.access = this.access.withAll(events);
    this.position = events[events.length - 1].globalPosition;
    const index = new Map<string, Principal>();
    for (const key of this.access.keys.values()) {
      if (key.status !== 'active') continue;
      const tenant = this.access.tenants.get(key.grant.tenantId);
      if (!tenant || tenant.status === 'absent') continue;
      const principal: Principal = {
        keyId: key.keyId,
        prefix: key.prefix,
        tenantId: key.grant.tenantId,
        scopes: new Set(key.grant.scopes),
        aliases: key.grant.aliases.length ? new Set(key.grant.aliases) : null,
        limits: key.grant.limits,
        budget: key.grant.budget ?? null,
        expiresAt: key.grant.expiresAt ? Date.parse(key.grant.expiresAt) : null,
        tenant: { status: tenant.status, limits: tenant.limits, budget: tenant.budget },
      };
      index.set(key.hash, principal);
      // During a rotation's overlap the previous secret is the same principal, until the overlap ends.
      if (key.previous) {
        const until = Date.parse(key.previous.validUntil);
        // Object.assign, not a spread then the new `rotatedAt` (eslint.config.js): the principal's keys are this projection's own.
        index.set(key.previous.hash, Object.assign({}, principal, { expiresAt: Math.min(until, principal.expiresAt ?? Infinity), rotatedAt: until }));
      }
    }
    this.index = index;
  }
}
