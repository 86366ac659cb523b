import { createHash, generateKeyPairSync } from 'node:crypto';
import { GENESIS_HASH, type StoredEvent, canonicalEvent, chainHash } from '../../projections/audit-chain/canonical-event.js';
import { checkpointSigner, ed25519Verifier, MIN_HMAC_KEY_LENGTH } from '../../projections/audit-chain/checkpoint-signer.js';
import { openCheckpointSigner, readAuditSettings } from '../../projections/audit-chain/audit-settings.js';
import { ConfigurationError } from '../../src/config/environment.js';

const event: StoredEvent = {
  globalPosition: 42,
  transactionId: '11312',
  streamId: 'alias-chat',
  streamVersion: 3,
  eventId: '01939a4e-0000-7000-8000-000000000001',
  type: 'AliasPublished',
  schemaVersion: 1,
  data: { version: 3, routes: [{ priority: 0, deploymentId: 'a' }], '10': 'ten', '9': 'nine', é: 'accent', z: null },
  metadata: { actor: 'admin:bootstrap', correlationId: 'c' },
  recordedAt: '2025-03-01T10:15:00.123456Z',
};

describe('audit chain: canonical encoding and hashes', () => {
  test('sorts keys by UTF-16 code units at every level, integer-like keys included, with no whitespace', () => {
    expect(canonicalEvent(event)).toBe(
      '{"data":{"10":"ten","9":"nine","routes":[{"deploymentId":"a","priority":0}],"version":3,"z":null,"é":"accent"},' +
      '"eventId":"01939a4e-0000-7000-8000-000000000001","globalPosition":42,"metadata":{"actor":"admin:bootstrap","correlationId":"c"},' +
      '"recordedAt":"2025-03-01T10:15:00.123456Z","schemaVersion":1,"streamId":"alias-chat","streamVersion":3,"transactionId":"11312","type":"AliasPublished"}',
    );
  });

  test('does not depend on the order jsonb hands the keys back in', () => {
    const reordered: StoredEvent = { ...event, data: { z: null, é: 'accent', '9': 'nine', routes: [{ deploymentId: 'a', priority: 0 }], '10': 'ten', version: 3 } };
    expect(canonicalEvent(reordered)).toBe(canonicalEvent(event));
  });

  test('any change of payload, metadata, position or time changes the encoding', () => {
    const base = canonicalEvent(event);
    for (const changed of [
      { ...event, data: { ...(event.data as object), version: 4 } },
      { ...event, metadata: { actor: 'admin:someone-else', correlationId: 'c' } },
      { ...event, globalPosition: 43 },
      { ...event, transactionId: '11313' },
      { ...event, recordedAt: '2025-03-01T10:15:00.123457Z' },
    ]) expect(canonicalEvent(changed)).not.toBe(base);
  });

  test('encodes exactly as the one-line verifier of docs/audit.md does, for nested, escaped and odd values', () => {
    // The verifier an auditor runs (docs/audit.md "Verifying an export offline"), verbatim.
    const readmeJcs = (v: unknown): string => Array.isArray(v) ? `[${v.map(readmeJcs).join(',')}]`
      : v !== null && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${readmeJcs((v as Record<string, unknown>)[k])}`).join(',')}}`
      : JSON.stringify(v);
    const odd: StoredEvent = {
      ...event,
      data: {
        nested: [[1, [2, { b: 'x"y\\z', a: '\u2028\n' }]], [], {}], 'quote"key': -0, '\u00e9': 1e21, e: 0.1, '': true,
        holes: [undefined, null, 'end'], missing: undefined, deep: { c: { b: { a: [false] } } },
      },
      metadata: {},
    };
    // Scalars the encoder writes without JSON.stringify, and those it must hand to it.
    const scalars: StoredEvent = {
      ...event,
      data: {
        plain: 'bench-model', empty: '', latin1: 'caf\u00e9 \u00ff', wide: '\u4e2d\u6587 \u2028', pair: 'emoji \ud83d\ude00 end',
        lowOnly: 'x\udc00', highOnly: '\ud800y', control: 'tab\tnul\u0000del\u007f', quote: 'a"b', backslash: 'a\\b',
        numbers: [0, -0, 1.5, -2, 5e-7, 1e21, 123456789012345680000, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity],
        flags: [true, false, null],
      },
    };
    for (const sample of [event, odd, scalars]) expect(canonicalEvent(sample)).toBe(readmeJcs(sample));
    expect(canonicalEvent(odd)).toContain('"holes":[,null,"end"]');
  });

  test('sorts by UTF-16 code units for objects of every size (in place when small, the built-in sort when large)', () => {
    const readmeJcs = (v: unknown): string => Array.isArray(v) ? `[${v.map(readmeJcs).join(',')}]`
      : v !== null && typeof v === 'object' ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${readmeJcs((v as Record<string, unknown>)[k])}`).join(',')}}`
      : JSON.stringify(v);
    // Code-point order would put the emoji (U+1F600) after U+FF61; UTF-16 order puts its high surrogate first.
    const alphabet = ['a', 'B', 'z', '0', '9', '10', '_', 'é', '\uff61', '\u{1f600}', '', ' ', 'aa', 'a0'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let size = 0; size <= 40; size++) {
      const data: Record<string, unknown> = {};
      while (Object.keys(data).length < size) {
        const key = Array.from({ length: 1 + Math.floor(next() * 3) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
        data[key] = size % 2 === 0 ? { [key]: size, b: [key] } : size;
      }
      const sample: StoredEvent = { ...event, data };
      expect(canonicalEvent(sample)).toBe(readmeJcs(sample));
    }
  });

  test('hash = sha256(previous hash as 32 bytes ‖ canonical event); the chain starts from 32 zero bytes', () => {
    const canonical = canonicalEvent(event);
    const expected = createHash('sha256').update(Buffer.alloc(32)).update(Buffer.from(canonical, 'utf8')).digest('hex');
    expect(GENESIS_HASH).toBe('0'.repeat(64));
    expect(chainHash(GENESIS_HASH, canonical)).toBe(expected);
    expect(chainHash(expected, canonical)).not.toBe(expected);
  });
});

describe('audit checkpoints: signing keys', () => {
  const claim = { sequence: 10, globalPosition: 12, hash: 'ab'.repeat(32) };

  test('HMAC-SHA256: signs deterministically, verifies, and rejects any change of claim or signature', () => {
    const signer = checkpointSigner('k'.repeat(MIN_HMAC_KEY_LENGTH));
    const signature = signer.sign(claim);
    expect(signer.algorithm).toBe('hmac-sha256');
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(signer.sign(claim)).toBe(signature);
    expect(signer.verify(claim, signature)).toBe(true);
    expect(signer.verify({ ...claim, sequence: 11 }, signature)).toBe(false);
    expect(signer.verify({ ...claim, hash: 'cd'.repeat(32) }, signature)).toBe(false);
    expect(signer.verify(claim, `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`)).toBe(false);
    expect(signer.verify(claim, 'not-hex')).toBe(false);
    expect(checkpointSigner('j'.repeat(MIN_HMAC_KEY_LENGTH)).verify(claim, signature)).toBe(false);
    expect(signer.publicKeyPem()).toBeNull();
  });

  test('refuses an HMAC key shorter than 32 bytes', () => {
    expect(() => checkpointSigner('short-key')).toThrow(/at least 32 bytes/);
  });

  test('Ed25519: the private key signs, the public key alone verifies and cannot sign', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const signer = checkpointSigner(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    expect(signer.algorithm).toBe('ed25519');
    const signature = signer.sign(claim);
    const auditor = ed25519Verifier(signer.publicKeyPem()!);
    expect(auditor.keyId).toBe(signer.keyId);
    expect(auditor.verify(claim, signature)).toBe(true);
    expect(auditor.verify({ ...claim, globalPosition: 13 }, signature)).toBe(false);
    expect(() => auditor.sign(claim)).toThrow(/cannot sign/);
  });

  test('a PEM that is not an Ed25519 private key is refused', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => checkpointSigner(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())).toThrow(/Ed25519/);
    expect(() => checkpointSigner('-----BEGIN PRIVATE KEY-----\nnonsense\n-----END PRIVATE KEY-----')).toThrow(/not a readable private key/);
  });
});

describe('audit settings', () => {
  test('defaults: no signing key, a checkpoint every 10 seconds', () => {
    expect(readAuditSettings({})).toEqual({ signingKeyRef: null, checkpointIntervalMs: 10_000 });
    expect(openCheckpointSigner(readAuditSettings({}))).toBeNull();
  });

  test('the signing key is a secret reference, never the key itself, and must resolve', () => {
    expect(() => readAuditSettings({ SWITCHYARD_AUDIT_SIGNING_KEY: 'x'.repeat(40) })).toThrow(ConfigurationError);
    process.env.AUDIT_SETTINGS_TEST_KEY = 'y'.repeat(40);
    const signer = openCheckpointSigner(readAuditSettings({ SWITCHYARD_AUDIT_SIGNING_KEY: 'env:AUDIT_SETTINGS_TEST_KEY' }));
    expect(signer?.algorithm).toBe('hmac-sha256');
    expect(() => openCheckpointSigner(readAuditSettings({ SWITCHYARD_AUDIT_SIGNING_KEY: 'env:AUDIT_SETTINGS_TEST_MISSING' }))).toThrow(/cannot be resolved/);
    process.env.AUDIT_SETTINGS_TEST_SHORT_KEY = 'short';
    expect(() => openCheckpointSigner(readAuditSettings({ SWITCHYARD_AUDIT_SIGNING_KEY: 'env:AUDIT_SETTINGS_TEST_SHORT_KEY' }))).toThrow(/at least 32 bytes/);
  });

  test('the checkpoint interval is a non-negative number of seconds', () => {
    expect(readAuditSettings({ SWITCHYARD_AUDIT_CHECKPOINT_SECONDS: '0' }).checkpointIntervalMs).toBe(0);
    expect(readAuditSettings({ SWITCHYARD_AUDIT_CHECKPOINT_SECONDS: '2.5' }).checkpointIntervalMs).toBe(2500);
    expect(() => readAuditSettings({ SWITCHYARD_AUDIT_CHECKPOINT_SECONDS: '-1' })).toThrow(ConfigurationError);
    expect(() => readAuditSettings({ SWITCHYARD_AUDIT_CHECKPOINT_SECONDS: 'soon' })).toThrow(ConfigurationError);
  });
});
