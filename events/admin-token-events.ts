import type { DomainEvent } from './event.js';

/**
 * The admin token's lifecycle, for the audit trail. The token itself, and even its hash, stay in the
 * `admin_tokens` table (a credential that must be deletable, see its migration): these events only say
 * which token id was issued or revoked, when, and by whom (the actor in metadata).
 */
export type AdminTokenIssued = DomainEvent<'AdminTokenIssued', { tokenId: string; origin: string }>;
export type AdminTokenRevoked = DomainEvent<'AdminTokenRevoked', { tokenId: string; reason: string }>;

export type AdminTokenEvent = AdminTokenIssued | AdminTokenRevoked;
export const ADMIN_TOKEN_EVENT_TYPES = ['AdminTokenIssued', 'AdminTokenRevoked'] as const;

/** One stream for every admin token: a reset revokes and issues in one append. */
export const ADMIN_TOKEN_STREAM = 'admin-tokens';
