import type { ContentPolicyDefinition } from '../../events/index.js';
import {
  FindingCounts, MAX_PLACEHOLDER_LENGTH, PlaceholderKeys, RequestTokenVault, SessionTokenVault, applyInputPolicy, applyOutputPolicy,
  compilePolicy, contentDigest, makePlaceholder, parsePlaceholder, placeholderPrefixAt, recoverText, scan, transform, verifyPlaceholder,
} from '../../modules/content-safety/index.js';

const definition: ContentPolicyDefinition = {
  input: { email: 'tokenize', phone: 'tokenize', card: 'mask', secret: 'block', ip_address: 'log', custom: [{ name: 'code', pattern: 'PRJ-[0-9]{6}', action: 'mask' }], deny_terms: { terms: ['nightingale'], action: 'mask' } },
  output: { email: 'mask', card: 'block' },
  tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false,
};
const compiled = compilePolicy(definition);
const keys = PlaceholderKeys.random();

describe('transformation', () => {
  test('mask writes typed markers, tokenize placeholders, log leaves the text; every finding is counted per type, direction and action', () => {
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const text = 'Mail ann@example.com, card 4111 1111 1111 1111, host 10.0.0.1, PRJ-123456, Nightingale, ann@example.com again.';
    const result = applyInputPolicy(text, { rules: compiled.input, vault });
    const placeholder = vault.tokenize('email', 'ann@example.com');
    expect(result.blocked).toBeNull();
    expect(result.text).toBe(`Mail ${placeholder}, card [CARD], host 10.0.0.1, [CUSTOM:code], [DENIED_TERM], ${placeholder} again.`);
    expect(result.counts.lines()).toEqual([
      { type: 'card', direction: 'input', action: 'mask', count: 1 },
      { type: 'custom:code', direction: 'input', action: 'mask', count: 1 },
      { type: 'deny_terms', direction: 'input', action: 'mask', count: 1 },
      { type: 'email', direction: 'input', action: 'tokenize', count: 2 },
      { type: 'ip_address', direction: 'input', action: 'log', count: 1 },
    ]);
    expect(JSON.stringify(result.counts.lines())).not.toContain('ann@');
  });

  test('block returns the finding type, never the value, and leaves the text as it was', () => {
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const text = 'key sk-proj-abcdefghijklmnop1234 and ann@example.com';
    const result = applyInputPolicy(text, { rules: compiled.input, vault });
    expect(result.blocked).toBe('secret');
    expect(result.text).toBe(text);
    expect(vault.size).toBe(0);
    expect(result.counts.lines()).toContainEqual({ type: 'secret', direction: 'input', action: 'block', count: 1 });
  });

  test('tokenize without a vault is a programming error, said at once', () => {
    expect(() => transform('a@b.io', scan('a@b.io', compiled.input), { direction: 'input' })).toThrow(/token vault/);
  });

  test('counts accumulate across the texts of one request', () => {
    const counts = new FindingCounts();
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    applyInputPolicy('a@b.io', { rules: compiled.input, vault, counts });
    applyInputPolicy('c@d.io and PRJ-000001', { rules: compiled.input, vault, counts });
    expect(counts.total).toBe(3);
  });

  test('the digest identifies a text without holding it', () => {
    expect(contentDigest('x')).toMatch(/^[0-9a-f]{64}$/);
    expect(contentDigest('x')).not.toBe(contentDigest('y'));
  });
});

describe('placeholders', () => {
  const scope = { tenantId: 'acme', kind: 'request' as const, id: 'r1' };

  test('short fixed ASCII grammar, at most MAX_PLACEHOLDER_LENGTH (≤ 40) characters, for every type', () => {
    expect(MAX_PLACEHOLDER_LENGTH).toBeLessThanOrEqual(40);
    for (const type of ['email', 'phone', 'card', 'iban', 'national_id', 'ip_address', 'secret', 'prompt_injection', 'deny_terms', 'custom:x'] as const) {
      const placeholder = makePlaceholder(keys, scope, type, 'value');
      expect(placeholder).toMatch(/^\[PII1_[A-Z]{2,6}_[A-Z2-7]{13}_[A-Z2-7]{10}\]$/);
      expect(placeholder.length).toBeLessThanOrEqual(MAX_PLACEHOLDER_LENGTH);
      expect(placeholderPrefixAt(placeholder, 0)).toBe(placeholder.length);
      expect(placeholderPrefixAt(placeholder.slice(0, -1), 0)).toBe(0);
    }
  });

  test('the same value in one scope gets the same placeholder; another request, session or tenant a different one', () => {
    const placeholder = makePlaceholder(keys, scope, 'email', 'ann@example.com');
    expect(makePlaceholder(keys, scope, 'email', 'ann@example.com')).toBe(placeholder);
    expect(makePlaceholder(keys, { ...scope, id: 'r2' }, 'email', 'ann@example.com')).not.toBe(placeholder);
    expect(makePlaceholder(keys, { ...scope, tenantId: 'other' }, 'email', 'ann@example.com')).not.toBe(placeholder);
    expect(makePlaceholder(keys, { ...scope, kind: 'session' }, 'email', 'ann@example.com')).not.toBe(placeholder);
    expect(makePlaceholder(PlaceholderKeys.random(), scope, 'email', 'ann@example.com')).not.toBe(placeholder);
  });

  test('the MAC binds type, id and scope: forged, altered, cross-request, cross-tenant and cross-session placeholders do not verify', () => {
    const placeholder = makePlaceholder(keys, scope, 'email', 'ann@example.com');
    const parts = parsePlaceholder(placeholder)!;
    expect(verifyPlaceholder(keys, scope, placeholder)).toBe(true);
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    expect(verifyPlaceholder(keys, scope, flip(placeholder, placeholder.length - 2))).toBe(false); // MAC altered
    expect(verifyPlaceholder(keys, scope, flip(placeholder, 13))).toBe(false); // id altered
    expect(verifyPlaceholder(keys, scope, placeholder.replace('_EMAIL_', '_PHONE_'))).toBe(false); // type altered
    expect(verifyPlaceholder(keys, scope, `[PII1_EMAIL_${parts.id}_AAAAAAAAAA]`)).toBe(false); // forged
    expect(verifyPlaceholder(keys, { ...scope, id: 'r2' }, placeholder)).toBe(false);
    expect(verifyPlaceholder(keys, { ...scope, tenantId: 'other' }, placeholder)).toBe(false);
    expect(verifyPlaceholder(keys, { ...scope, kind: 'session' }, placeholder)).toBe(false);
    expect(verifyPlaceholder(PlaceholderKeys.random(), scope, placeholder)).toBe(false);
  });

  test('recovery is exact: only this request\'s own placeholders come back; everything else stays as is and is counted', () => {
    const mine = new RequestTokenVault(keys, 'acme', 'r1');
    const other = new RequestTokenVault(keys, 'acme', 'r2');
    const otherTenant = new RequestTokenVault(keys, 'globex', 'r1');
    const own = mine.tokenize('email', 'ann@example.com');
    const foreign = other.tokenize('email', 'bob@example.com');
    const foreignTenant = otherTenant.tokenize('email', 'eve@example.com');
    const altered = own.slice(0, -3) + (own.at(-3) === 'A' ? 'B' : 'A') + own.slice(-2);
    const forged = `[PII1_EMAIL_${parsePlaceholder(own)!.id}_ABCDEFGHIJ]`;
    const cut = own.slice(0, 20);
    const lower = own.toLowerCase();
    const text = `1 ${own} 2 ${foreign} 3 ${foreignTenant} 4 ${altered} 5 ${forged} 6 ${cut} 7 ${lower} 8 ${own}`;
    const recovered = recoverText(text, mine);
    expect(recovered.text).toBe(`1 ann@example.com 2 ${foreign} 3 ${foreignTenant} 4 ${altered} 5 ${forged} 6 ${cut} 7 ${lower} 8 ann@example.com`);
    expect(recovered.resolved).toBe(2);
    expect(recovered.unresolved).toBe(5); // foreign, other tenant, altered, forged, cut (lower case is not a placeholder)
  });

  test('a cleared vault (the request is over) recovers nothing', () => {
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const placeholder = vault.tokenize('phone', '+44 20 7946 0958');
    vault.clear();
    expect(recoverText(placeholder, vault)).toEqual({ text: placeholder, resolved: 0, unresolved: 1 });
  });

  test('output: the model\'s own findings are checked, placeholders are left out of the scan, then recovered', () => {
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    const placeholder = vault.tokenize('email', 'ann@example.com');
    const result = applyOutputPolicy(`Write to ${placeholder} or new@example.org.`, { rules: compiled.output, vault });
    expect(result).toMatchObject({ text: 'Write to ann@example.com or [EMAIL].', blocked: null, resolved: 1, unresolved: 0 });
    expect(result.counts.lines()).toEqual([{ type: 'email', direction: 'output', action: 'mask', count: 1 }]);
    const blocked = applyOutputPolicy(`card 4111 1111 1111 1111 for ${placeholder}`, { rules: compiled.output, vault });
    expect(blocked).toMatchObject({ blocked: 'card', resolved: 0 });
  });

  test('keys: an operator key shorter than 32 characters is refused; none gives the per-process key, the same each time', () => {
    expect(() => PlaceholderKeys.from({ piiKey: () => 'short' })).toThrow(/at least 32/);
    const a = PlaceholderKeys.from({ piiKey: () => null });
    expect(a.operatorKeyed).toBe(false);
    expect(PlaceholderKeys.from(null)).toBe(a);
    const operator = PlaceholderKeys.from({ piiKey: () => 'x'.repeat(40) });
    expect(operator.operatorKeyed).toBe(true);
    expect(PlaceholderKeys.from({ piiKey: () => 'x'.repeat(40) }).keyId).toBe(operator.keyId);
  });

  test('session scope refuses the per-process key: other nodes could not read its placeholders', () => {
    expect(() => new SessionTokenVault(null as never, PlaceholderKeys.random(), 'acme', 's1', 60)).toThrow(/operator PII key/);
    expect(() => new SessionTokenVault(null as never, PlaceholderKeys.from({ piiKey: () => 'k'.repeat(32) }), 'acme', 's1', 0)).toThrow(/TTL/);
  });
});

describe('the placeholder instruction', () => {
  test('names the grammar without being a placeholder itself: recovering it changes nothing and counts nothing', async () => {
    const { PLACEHOLDER_INSTRUCTION } = await import('../../modules/content-safety/index.js');
    const vault = new RequestTokenVault(keys, 'acme', 'r1');
    applyInputPolicy('Mail ann@example.com', { rules: compiled.input, vault });
    expect(recoverText(PLACEHOLDER_INSTRUCTION, vault)).toMatchObject({ resolved: 0, unresolved: 0 });
  });
});
