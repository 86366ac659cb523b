import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { PlaceholderKeys } from './placeholder-keys.js';
import { parsePlaceholder, placeholderSpans, scopeBinding, verifyPlaceholder } from './placeholder.js';
import { TokenVault } from './token-vault.js';

const ENTRY_VERSION = 'v1';

/**
 * Session scope (opt-in, `x-session-id`): placeholders stay valid across the turns of a session and on every node,
 * so a client may send back history that holds them. Mappings live in Redis under a key that names neither tenant
 * nor session (an HMAC of the scope), values encrypted with AES-256-GCM under the installation key (a fresh
 * 96-bit nonce per value; the placeholder itself is the additional data, so an entry moved under another
 * placeholder does not decrypt), each with the session TTL, refreshed when a turn uses it.
 *
 * A request loads, before its answer starts, the mappings of the placeholders its input references (`loadReferenced`)
 * — only those whose MAC verifies for this session, so a forged placeholder never causes a lookup — and writes the
 * ones it made (`persist`). Its answer is then recovered synchronously from what it holds: a placeholder the request
 * never saw is not recovered, even if it exists in the session.
 */
export class SessionTokenVault extends TokenVault {
  private readonly keyPrefix: string;
  private readonly used = new Set<string>();

  constructor(private readonly redis: Redis, keys: PlaceholderKeys, tenantId: string, sessionId: string, private readonly ttlSeconds: number, namespace = 'switchyard:pii') {
    if (!keys.operatorKeyed) throw new Error('session-scoped tokenization needs an operator PII key (SWITCHYARD_PII_KEY): other nodes cannot read a per-process key');
    if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new Error('the session vault TTL must be a positive whole number of seconds');
    super(keys, { tenantId, kind: 'session', id: sessionId });
    this.keyPrefix = `${namespace}:${createHmac('sha256', keys.id).update(`vault-scope\u0000${scopeBinding(this.scope)}`).digest('hex').slice(0, 32)}:`;
  }

  /** Loads the mappings of the exact, authentic placeholders found in `texts` that this request does not hold yet. */
  async loadReferenced(texts: Iterable<string>): Promise<void> {
    const wanted: string[] = [];
    for (const text of texts) {
      for (const [start, end] of placeholderSpans(text)) {
        const placeholder = text.slice(start, end);
        if (this.values.has(placeholder) || wanted.includes(placeholder)) continue;
        if (verifyPlaceholder(this.keys, this.scope, placeholder)) wanted.push(placeholder);
      }
    }
    if (wanted.length === 0) return;
    const entries = await this.redis.mget(wanted.map((placeholder) => this.redisKey(placeholder)));
    wanted.forEach((placeholder, index) => {
      const entry = entries[index];
      if (entry === null) return; // expired or never stored: stays unresolved
      const value = this.decrypt(placeholder, entry);
      if (value === null) return;
      this.remember(placeholder, value);
      this.used.add(placeholder);
    });
  }

  /** Writes the placeholders made by this request (encrypted, with the TTL) and refreshes the TTL of those it used. */
  async persist(): Promise<void> {
    const fresh = this.takeNew();
    if (fresh.length === 0 && this.used.size === 0) return;
    const pipeline = this.redis.multi();
    for (const placeholder of fresh) pipeline.set(this.redisKey(placeholder), this.encrypt(placeholder, this.values.get(placeholder)!), 'EX', this.ttlSeconds);
    for (const placeholder of this.used) pipeline.expire(this.redisKey(placeholder), this.ttlSeconds);
    this.used.clear();
    const results = await pipeline.exec();
    const failure = results?.find(([error]) => error !== null);
    if (!results || failure) throw new Error(`the session token vault could not be written${failure ? `: ${failure[0]!.message}` : ''}`);
  }

  private redisKey(placeholder: string): string {
    return this.keyPrefix + parsePlaceholder(placeholder)!.id;
  }

  private encrypt(placeholder: string, value: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.encryption, nonce);
    cipher.setAAD(Buffer.from(placeholder));
    const sealed = Buffer.concat([nonce, cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${ENTRY_VERSION}.${this.keys.keyId}.${sealed.toString('base64')}`;
  }

  /** The value of an entry, or null when it is not one of ours (other key, other format, tampered). */
  private decrypt(placeholder: string, entry: string): string | null {
    const [version, keyId, body] = entry.split('.');
    if (version !== ENTRY_VERSION || keyId !== this.keys.keyId || !body) return null;
    const sealed = Buffer.from(body, 'base64');
    if (sealed.length < 12 + 16) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.keys.encryption, sealed.subarray(0, 12));
      decipher.setAAD(Buffer.from(placeholder));
      decipher.setAuthTag(sealed.subarray(sealed.length - 16));
      return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
