import { assertNever, type StateFold } from '../src/kernel/index.js';
import type { ApiKeyEvent, KeyLimits, KeyScope } from './api-key-events.js';
import type { TenantBudget } from './tenant-events.js';

/** What a key may do, and for which tenant: ApiKeyIssued's data without the key's id and secret. */
export interface KeyGrant {
  tenantId: string;
  scopes: KeyScope[];
  aliases: string[];
  limits: KeyLimits;
  expiresAt: string | null;
  /** Left out when the key has no budget of its own. */
  budget?: TenantBudget;
  /** The content policy attached to the key; left out when none is. */
  contentPolicy?: string;
}

/** A gateway key as its events leave it: what access decides on and the key index folds. */
export type ApiKeyState =
  | { status: 'absent' }
  | {
      status: 'active' | 'revoked' | 'expired'; keyId: string; hash: string; prefix: string; grant: KeyGrant;
      /** The secret before the last rotation, accepted until `validUntil` (the overlap window). */
      previous?: { hash: string; validUntil: string };
    };

export const apiKeyFold: StateFold<ApiKeyEvent, ApiKeyState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const { keyId, hash, prefix, ...grant } = event.data;
        return { status: 'active', keyId, hash, prefix, grant };
      }
      case 'ApiKeyUpdated': {
        if (state.status === 'absent') return state;
        const { keyId: _id, ...grant } = event.data;
        return { ...state, grant: { tenantId: state.grant.tenantId, ...grant } };
      }
      case 'ApiKeySecretRotated': {
        if (state.status === 'absent') return state;
        const { previous: _previous, ...rest } = state;
        const previous = event.data.previousValidUntil ? { hash: state.hash, validUntil: event.data.previousValidUntil } : undefined;
        return { ...rest, hash: event.data.hash, prefix: event.data.prefix, ...(previous ? { previous } : {}) };
      }
      case 'ApiKeyRevoked':
        return state.status === 'absent' ? state : { ...state, status: 'revoked' };
      case 'ApiKeyExpired':
        return state.status === 'absent' || state.status === 'revoked' ? state : { ...state, status: 'expired' };
      default:
        return assertNever(event);
    }
  },
};
