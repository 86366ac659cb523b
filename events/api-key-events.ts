import type { DomainEvent } from './event.js';
import type { TenantBudget } from './tenant-events.js';

/**
 * What a gateway key may do. `admin` is the admin API inside the key's own tenant; `admin:platform` is the
 * whole admin API across tenants (what the admin token can do, except changing provider credentials or
 * base URLs). Added without a schema change: a scope list is validated against this one when a key is
 * issued or changed, never when an event is read.
 */
export const KEY_SCOPES = ['inference', 'models:read', 'usage:read', 'admin', 'admin:platform'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** The scope of a key that administers the whole platform, not one tenant. */
export const PLATFORM_SCOPE = 'admin:platform' satisfies KeyScope;

/**
 * Rate limits per minute and concurrency. `inputTpm` and `outputTpm` are left out when unset, so keys
 * issued before they existed compare equal with a configuration that does not set them.
 */
export interface KeyLimits {
  rpm: number | null;
  tpm: number | null;
  inputTpm?: number | null;
  outputTpm?: number | null;
  maxConcurrency: number | null;
}

/** The key itself is never stored: only its SHA-256 (hex) and a short display prefix. */
export type ApiKeyIssued = DomainEvent<
  'ApiKeyIssued',
  {
    keyId: string;
    tenantId: string;
    hash: string;
    prefix: string;
    scopes: KeyScope[];
    /** Aliases the key may call; empty = every alias. */
    aliases: string[];
    limits: KeyLimits;
    expiresAt: string | null;
    /** The key's own spending limit, on top of its tenant's; left out when it has none. */
    budget?: TenantBudget;
    /** The content policy attached to the key (on top of its tenant's and the alias's); left out when none is. */
    contentPolicy?: string;
  }
>;
/**
 * The key's grant changed (alias allowlist, scopes, limits, budget, expiry, content policy) without a new secret: the
 * whole grant as it now is. The tenant never changes.
 */
export type ApiKeyUpdated = DomainEvent<
  'ApiKeyUpdated',
  { keyId: string; scopes: KeyScope[]; aliases: string[]; limits: KeyLimits; expiresAt: string | null; budget?: TenantBudget; contentPolicy?: string }
>;

/**
 * A new secret for the same key (same id, grant, spend and limits). The previous secret keeps working
 * until `previousValidUntil` (the overlap window), or stops at once when that is null.
 */
export type ApiKeySecretRotated = DomainEvent<
  'ApiKeySecretRotated',
  { keyId: string; hash: string; prefix: string; previousValidUntil: string | null }
>;

export type ApiKeyRevoked = DomainEvent<'ApiKeyRevoked', { keyId: string; reason: string | null }>;
export type ApiKeyExpired = DomainEvent<'ApiKeyExpired', { keyId: string }>;

export type ApiKeyEvent = ApiKeyIssued | ApiKeyUpdated | ApiKeySecretRotated | ApiKeyRevoked | ApiKeyExpired;
export const API_KEY_EVENT_TYPES = ['ApiKeyIssued', 'ApiKeyUpdated', 'ApiKeySecretRotated', 'ApiKeyRevoked', 'ApiKeyExpired'] as const;

export const apiKeyStream = (keyId: string) => `apikey-${keyId}`;
