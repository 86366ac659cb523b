import { type KeyObject, createHash, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';

/** Where the operator's PII key comes from: the caller resolves the secret reference (setting SWITCHYARD_PII_KEY). */
export interface PiiKeySource {
  /** The resolved key, or null when none is configured. */
  piiKey(): string | null;
}

/** The shortest operator key accepted: 32 characters (256 bits when random). */
export const MIN_PII_KEY_LENGTH = 32;

/**
 * The keys of placeholders, derived (HKDF-SHA256) from one installation secret: `mac` authenticates a placeholder,
 * `id` derives its id from the value within its scope, `encryption` (AES-256-GCM) protects session-vault values.
 * Without an operator key a random per-process secret is used: placeholders then live as long as the process,
 * which is all request scope needs; session scope refuses it (other nodes could not read them).
 */
export class PlaceholderKeys {
  /** Key objects, not buffers: an HMAC keyed by a KeyObject skips importing the key on every placeholder. */
  readonly mac: KeyObject;
  readonly id: KeyObject;
  readonly encryption: KeyObject;
  /** Names the installation key without revealing it (first 8 bytes of a hash of the MAC key), stored with vault entries. */
  readonly keyId: string;

  private constructor(secret: Buffer, readonly operatorKeyed: boolean) {
    const mac = derive(secret, 'placeholder-mac');
    this.mac = createSecretKey(mac);
    this.id = createSecretKey(derive(secret, 'placeholder-id'));
    this.encryption = createSecretKey(derive(secret, 'vault-encryption'));
    this.keyId = createHash('sha256').update(mac).digest('hex').slice(0, 16);
  }

  /** The operator's key when there is one, else this process's random key. A key shorter than MIN_PII_KEY_LENGTH is refused. */
  static from(source: PiiKeySource | null | undefined): PlaceholderKeys {
    const key = source?.piiKey() ?? null;
    if (key === null || key === '') return processKeys();
    if (key.length < MIN_PII_KEY_LENGTH) throw new Error(`the PII key must be at least ${MIN_PII_KEY_LENGTH} characters (a random secret)`);
    return new PlaceholderKeys(Buffer.from(key, 'utf8'), true);
  }

  /** A random key, not the process's shared one (tests; one-off tools). */
  static random(): PlaceholderKeys {
    return new PlaceholderKeys(randomBytes(32), false);
  }
}

let perProcess: PlaceholderKeys | null = null;

function processKeys(): PlaceholderKeys {
  perProcess ??= PlaceholderKeys.random();
  return perProcess;
}

function derive(secret: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'switchyard-pii-v1', purpose, 32));
}
