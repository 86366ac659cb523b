import { createHash, createHmac, createPrivateKey, createPublicKey, type KeyObject, sign, timingSafeEqual, verify } from 'node:crypto';

export type CheckpointAlgorithm = 'hmac-sha256' | 'ed25519';

/** What a signed checkpoint attests: the chain had `hash` at `sequence`, the entry of `globalPosition`. */
export interface CheckpointClaim {
  sequence: number;
  globalPosition: number;
  hash: string;
}

/** The exact bytes signed (UTF-8): a fixed prefix, then sequence, position and hash, one per line. */
export function checkpointMessage(claim: CheckpointClaim): string {
  return `switchyard-audit-checkpoint/v1\n${claim.sequence}\n${claim.globalPosition}\n${claim.hash}`;
}

export interface CheckpointSigner {
  readonly algorithm: CheckpointAlgorithm;
  /** Identifies the key without revealing it: the first 16 hex digits of a SHA-256 over key material. */
  readonly keyId: string;
  sign(claim: CheckpointClaim): string;
  verify(claim: CheckpointClaim, signature: string): boolean;
  /** Ed25519 only: the public key (SPKI PEM) an auditor verifies with; null for HMAC. */
  publicKeyPem(): string | null;
}

/** An HMAC key shorter than this is refused: it would be guessable offline from any checkpoint. */
export const MIN_HMAC_KEY_LENGTH = 32;

export class CheckpointKeyError extends Error {
  override readonly name = 'CheckpointKeyError';
}

/**
 * Builds the signer from the resolved secret: a PKCS#8 PEM Ed25519 private key signs with Ed25519 (an
 * auditor then needs only the public key), anything else is an HMAC-SHA256 key of at least 32 bytes.
 */
export function checkpointSigner(secret: string): CheckpointSigner {
  if (secret.includes('-----BEGIN')) return ed25519Signer(secret);
  const key = Buffer.from(secret, 'utf8');
  if (key.length < MIN_HMAC_KEY_LENGTH) {
    throw new CheckpointKeyError(`the audit signing key must be at least ${MIN_HMAC_KEY_LENGTH} bytes (HMAC-SHA256) or an Ed25519 private key in PEM`);
  }
  const mac = (claim: CheckpointClaim) => createHmac('sha256', key).update(checkpointMessage(claim), 'utf8').digest();
  return {
    algorithm: 'hmac-sha256',
    keyId: createHash('sha256').update('switchyard-audit-key-id\n').update(key).digest('hex').slice(0, 16),
    sign: (claim) => mac(claim).toString('hex'),
    verify: (claim, signature) => {
      const expected = mac(claim);
      const given = /^[0-9a-f]{64}$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    publicKeyPem: () => null,
  };
}

function ed25519Signer(pem: string): CheckpointSigner {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new CheckpointKeyError('the audit signing key looks like PEM but is not a readable private key');
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new CheckpointKeyError('a PEM audit signing key must be an Ed25519 private key');
  const publicKey = createPublicKey(privateKey);
  const verifier = ed25519Verifier(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  return {
    ...verifier,
    // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
    sign: (claim) => sign(null, Buffer.from(checkpointMessage(claim), 'utf8'), privateKey).toString('base64'),
  };
}

/** Verifies Ed25519 checkpoints with the public key alone (what an auditor holds); it cannot sign. */
export function ed25519Verifier(publicKeyPem: string): CheckpointSigner {
  const publicKey = createPublicKey(publicKeyPem);
  if (publicKey.asymmetricKeyType !== 'ed25519') throw new CheckpointKeyError('not an Ed25519 public key');
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return {
    algorithm: 'ed25519',
    keyId: createHash('sha256').update(spki).digest('hex').slice(0, 16),
    sign: () => {
      throw new CheckpointKeyError('a public key cannot sign checkpoints');
    },
    verify: (claim, signature) => {
      try {
        return verify(null, Buffer.from(checkpointMessage(claim), 'utf8'), publicKey, Buffer.from(signature, 'base64'));
      } catch {
        return false;
      }
    },
    publicKeyPem: () => publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}
