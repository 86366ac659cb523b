import { readConsoleOverrides } from '../../modules/console/console-settings.js';
import { parseOidcRoleMap, roleFromClaim } from '../../modules/console/oidc/oidc-role-map.js';
import { consoleSecurityHeaders } from '../../modules/console/console-security-headers.js';

describe('console settings', () => {
  test('single sign-on needs issuer and client id together, a secret reference (never a literal), http(s) URLs and the openid scope', () => {
    const base = { SWITCHYARD_CONSOLE_OIDC_ISSUER: 'https://id.example.com', SWITCHYARD_CONSOLE_OIDC_CLIENT_ID: 'console' };
    expect(() => readConsoleOverrides({ SWITCHYARD_CONSOLE_OIDC_ISSUER: 'https://id.example.com' })).toThrow(/both SWITCHYARD_CONSOLE_OIDC_ISSUER and SWITCHYARD_CONSOLE_OIDC_CLIENT_ID/);
    expect(() => readConsoleOverrides({ ...base, SWITCHYARD_CONSOLE_OIDC_CLIENT_SECRET: 'plain-secret-value' })).toThrow(/secret reference/);
    expect(() => readConsoleOverrides({ ...base, SWITCHYARD_CONSOLE_OIDC_ISSUER: 'ftp://id.example.com' })).toThrow(/http\(s\) URL/);
    expect(() => readConsoleOverrides({ ...base, SWITCHYARD_CONSOLE_OIDC_SCOPES: 'profile email' })).toThrow(/openid/);
    expect(() => readConsoleOverrides({ ...base, SWITCHYARD_CONSOLE_OIDC_ROLE_MAP: 'admins=root' })).toThrow(/admins=root/);
    expect(() => readConsoleOverrides({ SWITCHYARD_CONSOLE_IDLE_TIMEOUT_SECONDS: '0' })).toThrow(/positive integer/);
    expect(() => readConsoleOverrides({ SWITCHYARD_CONSOLE_SECURE_COOKIE: 'sometimes' })).toThrow(/auto or always/);
    const read = readConsoleOverrides({
      ...base, SWITCHYARD_CONSOLE_OIDC_CLIENT_SECRET: 'file:/run/secrets/console', SWITCHYARD_CONSOLE_OIDC_ROLE_MAP: 'ops=operator, money = finance',
      SWITCHYARD_CONSOLE_IDLE_TIMEOUT_SECONDS: '600', SWITCHYARD_CONSOLE_SESSION_MAX_SECONDS: '3600',
    });
    expect(read.idleTimeoutMs).toBe(600_000);
    expect(read.maxAgeMs).toBe(3_600_000);
    expect(read.oidc).toMatchObject({ issuer: 'https://id.example.com', clientId: 'console', clientSecretRef: 'file:/run/secrets/console', scopes: ['openid', 'profile', 'email'], roleClaim: 'groups' });
    expect([...read.oidc!.roleMap]).toEqual([['ops', 'operator'], ['money', 'finance']]);
    expect(readConsoleOverrides({})).toEqual({});
  });

  test('a claim maps to the strongest role among its values; unmapped or malformed claims map to none', () => {
    const map = parseOidcRoleMap('everyone=viewer,audit=auditor,money=finance,ops=operator,root=admin', 'test');
    expect(roleFromClaim(['everyone', 'ops', 'audit'], map)).toBe('operator');
    expect(roleFromClaim(['money', 'audit'], map)).toBe('finance');
    expect(roleFromClaim('root', map)).toBe('admin');
    expect(roleFromClaim(['marketing'], map)).toBeNull();
    expect(roleFromClaim([], map)).toBeNull();
    expect(roleFromClaim({ root: true }, map)).toBeNull();
    expect(roleFromClaim([42, null], map)).toBeNull();
    expect(roleFromClaim(undefined, map)).toBeNull();
  });

  test('the security headers forbid inline script and style, framing and sniffing', () => {
    const headers = consoleSecurityHeaders();
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['cache-control']).toBe('no-store');
    expect(consoleSecurityHeaders('public, max-age=31536000, immutable')['cache-control']).toBe('public, max-age=31536000, immutable');
  });
});
