import { type ApiKeyEvent, apiKeyFold, type ApiKeyState, type KeyGrant, KEY_SCOPES, type KeyScope } from '../../../events/index.js';
import { assertNever, type Decider, DomainError, sameJson } from '../../../src/kernel/index.js';
import { budgetProblem } from '../tenant/tenant.decider.js';

export type ApiKeyCommand =
  | { type: 'IssueApiKey'; keyId: string; hash: string; prefix: string; grant: KeyGrant }
  | { type: 'UpdateApiKey'; keyId: string; grant: KeyGrant }
  | { type: 'RotateApiKeySecret'; keyId: string; hash: string; prefix: string; overlapUntil: string | null }
  | { type: 'RevokeApiKey'; keyId: string; reason: string | null }
  | { type: 'ExpireApiKey'; keyId: string };

/** The scopes of a key issued without any: the admin API and the configuration file both apply these. */
export const DEFAULT_KEY_SCOPES: readonly KeyScope[] = ['inference', 'models:read'];

export const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKeyEvent, ApiKeyState> = {
  initialState: apiKeyFold.initialState,
  evolve: apiKeyFold.evolve,

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
        throw new DomainError('key_exists', `Key ${id} was already issued; change its grant with an update, its secret with a rotation`, 422);
      }
      case 'UpdateApiKey': {
        const current = requireActive(state, id);
        if (command.grant.tenantId !== current.grant.tenantId) {
          throw new DomainError('invalid_key', `Key ${id} belongs to tenant ${current.grant.tenantId}; a key never moves to another tenant (issue a new one)`, 422);
        }
        const problem = grantProblem(command.grant, context.now);
        if (problem) throw new DomainError('invalid_key', problem, 422);
        if (sameJson(current.grant, command.grant)) return [];
        const { tenantId: _tenant, ...grant } = command.grant;
        return [{ type: 'ApiKeyUpdated', data: { keyId: id, ...grant } }];
      }
      case 'RotateApiKeySecret': {
        const current = requireActive(state, id);
        if (!/^[0-9a-f]{64}$/.test(command.hash)) throw new DomainError('invalid_key', 'hash must be a SHA-256 hex digest', 422);
        if (command.hash === current.hash) throw new DomainError('invalid_key', 'the new secret must differ from the current one', 422);
        if (command.overlapUntil !== null) {
          const until = new Date(command.overlapUntil);
          if (Number.isNaN(until.getTime()) || until <= context.now) throw new DomainError('invalid_key', 'the overlap must end in the future', 422);
        }
        return [{ type: 'ApiKeySecretRotated', data: { keyId: id, hash: command.hash, prefix: command.prefix, previousValidUntil: command.overlapUntil } }];
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
};

function requireActive(state: ApiKeyState, id: string) {
  if (state.status === 'absent') throw new DomainError('key_not_found', `Key ${id} does not exist`, 404);
  if (state.status !== 'active') throw new DomainError('key_not_active', `Key ${id} is ${state.status}`);
  return state;
}

function grantProblem(grant: KeyGrant, now: Date): string | null {
  if (!grant.tenantId) return 'tenant is required';
  if (grant.scopes.length === 0) return 'a key needs at least one scope';
  const unknown = grant.scopes.filter((scope) => !KEY_SCOPES.includes(scope));
  if (unknown.length) return `unknown scopes: ${unknown.join(', ')} (known: ${KEY_SCOPES.join(', ')})`;
  if (grant.budget) {
    const problem = budgetProblem(grant.budget);
    if (problem) return problem;
  }
  if (grant.expiresAt !== null) {
    const at = new Date(grant.expiresAt);
    if (Number.isNaN(at.getTime())) return 'expiresAt must be an ISO-8601 timestamp';
    if (at <= now) return 'expiresAt must be in the future';
  }
  return null;
}
