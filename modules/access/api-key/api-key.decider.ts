import { type ApiKeyEvent, KEY_SCOPES, type KeyLimits, type KeyScope } from '../../../events/index.js';
import { assertNever, type Decider, DomainError, sameJson } from '../../../src/kernel/index.js';

export interface KeyGrant {
  tenantId: string;
  scopes: KeyScope[];
  aliases: string[];
  limits: KeyLimits;
  expiresAt: string | null;
}

export type ApiKeyCommand =
  | { type: 'IssueApiKey'; keyId: string; hash: string; prefix: string; grant: KeyGrant }
  | { type: 'RevokeApiKey'; keyId: string; reason: string | null }
  | { type: 'ExpireApiKey'; keyId: string };

export type ApiKeyState =
  | { status: 'absent' }
  | { status: 'active' | 'revoked' | 'expired'; keyId: string; hash: string; prefix: string; grant: KeyGrant };

export const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKeyEvent, ApiKeyState> = {
  initialState: () => ({ status: 'absent' }),

  decide(command, state, context) {
    const id = command.keyId;
    switch (command.type) {
      case 'IssueApiKey': {
        const problem = grantProblem(command.grant, context.now);
        if (!KEY_ID.test(id)) throw new DomainError('invalid_key', 'key ids use letters, digits, ".", "_" and "-" (at most 64)', 422);
        if (problem) throw new DomainError('invalid_key', problem, 422);
        if (!/^[0-9a-f]{64}$/.test(command.hash)) throw new DomainError('invalid_key', 'hash must be a SHA-256 hex digest', 422);
        if (state.status === 'absent') {
          return [{ type: 'ApiKeyIssued', data: { keyId: id, hash: command.hash, prefix: command.prefix, ...command.grant } }];
        }
        if (state.status === 'active' && state.hash === command.hash && sameJson(state.grant, command.grant)) return [];
        throw new DomainError('key_exists', `Key ${id} was already issued; issue a new key id to rotate or change it`, 422);
      }
      case 'RevokeApiKey':
        if (state.status === 'absent') throw new DomainError('key_not_found', `Key ${id} does not exist`, 404);
        if (state.status === 'revoked') throw new DomainError('key_already_revoked', `Key ${id} is already revoked`);
        return [{ type: 'ApiKeyRevoked', data: { keyId: id, reason: command.reason } }];
      case 'ExpireApiKey':
        if (state.status === 'absent') throw new DomainError('key_not_found', `Key ${id} does not exist`, 404);
        if (state.status !== 'active') throw new DomainError('key_not_active', `Key ${id} is ${state.status}`);
        if (!state.grant.expiresAt || new Date(state.grant.expiresAt) > context.now) {
          throw new DomainError('key_not_due', `Key ${id} has not reached its expiry`);
        }
        return [{ type: 'ApiKeyExpired', data: { keyId: id } }];
      default:
        return assertNever(command);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyIssued': {
        const { keyId, hash, prefix, ...grant } = event.data;
        return { status: 'active', keyId, hash, prefix, grant };
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

function grantProblem(grant: KeyGrant, now: Date): string | null {
  if (!grant.tenantId) return 'tenant is required';
  if (grant.scopes.length === 0) return 'a key needs at least one scope';
  const unknown = grant.scopes.filter((scope) => !KEY_SCOPES.includes(scope));
  if (unknown.length) return `unknown scopes: ${unknown.join(', ')} (known: ${KEY_SCOPES.join(', ')})`;
  if (grant.expiresAt !== null) {
    const at = new Date(grant.expiresAt);
    if (Number.isNaN(at.getTime())) return 'expiresAt must be an ISO-8601 timestamp';
    if (at <= now) return 'expiresAt must be in the future';
  }
  return null;
}
