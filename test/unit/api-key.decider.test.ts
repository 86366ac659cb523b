import type { ApiKeyEvent } from '../../events/api-key-events.js';
import type { KeyGrant } from '../../events/api-key-state.js';
import { apiKeyDecider } from '../../modules/access/api-key/api-key.decider.js';
import { KEY_PATTERN, displayPrefix, generateApiKey, hashApiKey } from '../../modules/access/api-key/key-format.js';
import { sameHash } from '../../src/kernel/same-hash.js';
import { SPEC_NOW, deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(apiKeyDecider);
const keyId = 'acme-app';
const plaintext = 'sk-sy-0123456789abcdefghijABCDEFGHIJ01';
const hash = hashApiKey(plaintext);
const prefix = displayPrefix(plaintext);

const grant = (overrides: Partial<KeyGrant> = {}): KeyGrant => ({
  tenantId: 'acme', scopes: ['inference', 'models:read'], aliases: ['chat-fast'], limits: { rpm: 60, tpm: null, maxConcurrency: 4 },
  expiresAt: '2026-06-30T00:00:00.000Z', ...overrides,
});
const issued = (g = grant()): ApiKeyEvent => ({ type: 'ApiKeyIssued', data: { keyId, hash, prefix, ...g } });
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { keyId, reason: 'leaked' } };
const expired: ApiKeyEvent = { type: 'ApiKeyExpired', data: { keyId } };
const issue = (g = grant(), h = hash) => ({ type: 'IssueApiKey' as const, keyId, hash: h, prefix, grant: g });

describe('API key aggregate', () => {
  describe('IssueApiKey', () => {
    test('records the hash, display prefix, scopes, alias allowlist, limits and expiry, never the key', () => {
      spec.given([]).when(issue()).then([issued()]);
      expect(JSON.stringify(issued())).not.toContain(plaintext);
    });
    test('issuing the same key and grant again changes nothing (idempotent apply)', () => {
      spec.given([issued()]).when(issue()).thenNothing();
    });
    test('the same id with another secret or grant is refused: keys are immutable', () => {
      spec.given([issued()]).when(issue(grant(), hashApiKey(generateApiKey()))).thenThrows('key_exists', 422);
      spec.given([issued()]).when(issue(grant({ scopes: ['inference', 'admin'] }))).thenThrows('key_exists', 422);
    });
    test('a revoked id cannot be issued again', () => {
      spec.given([issued(), revoked]).when(issue()).thenThrows('key_exists', 422);
    });
    const invalid: Array<[string, Partial<KeyGrant>]> = [
      ['no scope', { scopes: [] }],
      ['an unknown scope', { scopes: ['inference', 'root' as 'admin'] }],
      ['an expiry in the past', { expiresAt: '2025-01-01T00:00:00.000Z' }],
      ['an expiry that is not a timestamp', { expiresAt: 'next tuesday' }],
      ['no tenant', { tenantId: '' }],
    ];
    test.each(invalid)('refuses %s', (_name, overrides) => {
      spec.given([]).when(issue(grant(overrides))).thenThrows('invalid_key', 422);
    });
    test('refuses a hash that is not a SHA-256 digest (e.g. the plaintext key by mistake)', () => {
      spec.given([]).when(issue(grant(), plaintext)).thenThrows('invalid_key', 422);
    });
    test('refuses an id with invalid characters', () => {
      spec.given([]).when({ ...issue(), keyId: 'a key' }).thenThrows('invalid_key', 422);
    });
  });

  describe('UpdateApiKey', () => {
    const update = (g: KeyGrant) => ({ type: 'UpdateApiKey' as const, keyId, grant: g });
    test('records the whole new grant, without a new secret', () => {
      const wider = grant({ aliases: ['chat-fast', 'chat-smart'], limits: { rpm: 120, tpm: null, maxConcurrency: 4 } });
      const { tenantId: _t, ...data } = wider;
      spec.given([issued()]).when(update(wider)).then([{ type: 'ApiKeyUpdated', data: { keyId, ...data } }]);
    });
    test('the same grant changes nothing', () => {
      spec.given([issued()]).when(update(grant())).thenNothing();
    });
    test('a key never moves to another tenant; an invalid grant, a revoked or unknown key are refused', () => {
      spec.given([issued()]).when(update(grant({ tenantId: 'other' }))).thenThrows('invalid_key', 422);
      spec.given([issued()]).when(update(grant({ scopes: [] }))).thenThrows('invalid_key', 422);
      spec.given([issued(), revoked]).when(update(grant())).thenThrows('key_not_active', 409);
      spec.given([]).when(update(grant())).thenThrows('key_not_found', 404);
    });
  });

  describe('RotateApiKeySecret', () => {
    const fresh = hashApiKey(generateApiKey());
    const rotate = (overlapUntil: string | null, h = fresh) => ({ type: 'RotateApiKeySecret' as const, keyId, hash: h, prefix: 'sk-sy-new', overlapUntil });
    test('a new secret, with the previous one accepted until the overlap ends', () => {
      const until = '2026-03-01T00:10:00.000Z';
      spec.given([issued()]).when(rotate(until)).then([{ type: 'ApiKeySecretRotated', data: { keyId, hash: fresh, prefix: 'sk-sy-new', previousValidUntil: until } }]);
      const state = [issued(), { type: 'ApiKeySecretRotated', data: { keyId, hash: fresh, prefix: 'sk-sy-new', previousValidUntil: until } } as ApiKeyEvent]
        .reduce(apiKeyDecider.evolve, apiKeyDecider.initialState());
      expect(state).toMatchObject({ status: 'active', hash: fresh, previous: { hash, validUntil: until }, grant: grant() });
    });
    test('the same secret, an overlap in the past, or a revoked key are refused', () => {
      spec.given([issued()]).when(rotate(null, hash)).thenThrows('invalid_key', 422);
      spec.given([issued()]).when(rotate('2020-01-01T00:00:00.000Z')).thenThrows('invalid_key', 422);
      spec.given([issued(), revoked]).when(rotate(null)).thenThrows('key_not_active', 409);
    });
  });

  describe('RevokeApiKey', () => {
    test('an active key is revoked', () => {
      spec.given([issued()]).when({ type: 'RevokeApiKey', keyId, reason: 'leaked' }).then([revoked]);
    });
    test('an expired key can still be revoked (the record says why it must never come back)', () => {
      spec.given([issued(), expired]).when({ type: 'RevokeApiKey', keyId, reason: 'leaked' }).then([revoked]);
    });
    test('revoking a revoked key is refused', () => {
      spec.given([issued(), revoked]).when({ type: 'RevokeApiKey', keyId, reason: null }).thenThrows('key_already_revoked', 409);
    });
    test('revoking an unknown key is refused', () => {
      spec.given([]).when({ type: 'RevokeApiKey', keyId, reason: null }).thenThrows('key_not_found', 404);
    });
  });

  describe('ExpireApiKey', () => {
    const after = { now: new Date('2026-07-01T00:00:00.000Z') };
    test('a key past its expiry is expired', () => {
      spec.given([issued()]).when({ type: 'ExpireApiKey', keyId }, after).then([expired]);
    });
    test('a key before its expiry cannot be expired', () => {
      spec.given([issued()]).when({ type: 'ExpireApiKey', keyId }, { now: SPEC_NOW }).thenThrows('key_not_due', 409);
    });
    test('a key without expiry cannot be expired', () => {
      spec.given([issued(grant({ expiresAt: null }))]).when({ type: 'ExpireApiKey', keyId }, after).thenThrows('key_not_due', 409);
    });
    test('an expired or revoked key cannot be expired (a second node sweeping finds nothing to do)', () => {
      spec.given([issued(), expired]).when({ type: 'ExpireApiKey', keyId }, after).thenThrows('key_not_active', 409);
      spec.given([issued(), revoked]).when({ type: 'ExpireApiKey', keyId }, after).thenThrows('key_not_active', 409);
    });
    test('an unknown key cannot be expired', () => {
      spec.given([]).when({ type: 'ExpireApiKey', keyId }, after).thenThrows('key_not_found', 404);
    });
  });

  describe('key format', () => {
    test('keys are sk-sy- plus 32 base62 characters, unique, shown by a short prefix only', () => {
      const keys = new Set(Array.from({ length: 200 }, generateApiKey));
      expect(keys.size).toBe(200);
      for (const key of keys) expect(key).toMatch(KEY_PATTERN);
      const key = [...keys][0];
      expect(displayPrefix(key)).toBe(`${key.slice(0, 10)}…`);
      expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
      expect(sameHash(hashApiKey(key), hashApiKey(key))).toBe(true);
      expect(sameHash(hashApiKey(key), hashApiKey(`${key}x`))).toBe(false);
      expect(sameHash(hashApiKey(key), 'abcd')).toBe(false);
      // The log stores these digests: the same key must hash to the same hex whatever computes it.
      expect(hashApiKey(`sk-sy-${'a'.repeat(32)}`)).toBe('83c61062707b14f4304eb0d2be98e5d24486082e6f638cedcd4aab34fdc3bb6d');
    });
  });
});
