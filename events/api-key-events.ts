import type { DomainEvent } from './event.js';
import type { TenantBudget } from './tenant-events.js';

export const KEY_SCOPES = ['inference', 'models:read', 'usage:read', 'admin'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

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
  }
>;
export type ApiKeyRevoked = DomainEvent<'ApiKeyRevoked', { keyId: string; reason: string | null }>;
export type ApiKeyExpired = DomainEvent<'ApiKeyExpired', { keyId: string }>;

export type ApiKeyEvent = ApiKeyIssued | ApiKeyRevoked | ApiKeyExpired;
export const API_KEY_EVENT_TYPES = ['ApiKeyIssued', 'ApiKeyRevoked', 'ApiKeyExpired'] as const;

export const apiKeyStream = (keyId: string) => `apikey-${keyId}`;
