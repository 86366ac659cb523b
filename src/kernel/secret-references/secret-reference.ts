import { readFileSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { rememberSecret } from './known-secrets.js';
import { type SecretReferencePolicy, envNameAllowed, insideDirectories, secretReferencePolicy } from './secret-reference-policy.js';
import { EVENT_STORE_ENVIRONMENT } from '../event-store/event-store-settings.js';
import { DEFAULT_DATA_DIR, textSetting } from '../settings.js';

/**
 * Secrets are configured by reference: `env:NAME` reads an environment variable, `file:PATH` a file
 * (trailing newline trimmed). Only the reference is ever stored in events or returned by APIs; what a
 * reference may read is bounded by the process's SecretReferencePolicy.
 */
export function isSecretRef(value: string): boolean {
  return /^env:[A-Za-z_][A-Za-z0-9_]*$/.test(value) || /^file:.+/.test(value);
}

export class SecretResolutionError extends Error {
  override readonly name = 'SecretResolutionError';
}

/** A secret file larger than this is no credential; reading it whole would only cost memory. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

// One message per kind, whatever the reason: a caller must not learn whether a variable or file exists.
const ENV_UNAVAILABLE = 'it is not set, or SWITCHYARD_SECRET_ENV does not allow it';
const FILE_UNAVAILABLE = 'it does not exist, is not a readable file, or lies outside SWITCHYARD_SECRETS_DIR';

let installed: SecretReferencePolicy | null = null;

/** Set once at start from the environment (openPlatform); until then the defaults of process.env apply. */
export function installSecretReferencePolicy(policy: SecretReferencePolicy): void {
  installed = policy;
}

export function currentSecretReferencePolicy(): SecretReferencePolicy {
  return installed ?? secretReferencePolicy(process.env, textSetting(process.env, EVENT_STORE_ENVIRONMENT.SWITCHYARD_DATA_DIR) || DEFAULT_DATA_DIR);
}

/** The value behind a reference; every value resolved is remembered so it can be scrubbed from foreign text. */
export function resolveSecret(ref: string, policy: SecretReferencePolicy = currentSecretReferencePolicy()): string {
  const value = read(ref, policy);
  rememberSecret(value);
  return value;
}

function read(ref: string, policy: SecretReferencePolicy): string {
  if (ref.startsWith('env:')) {
    const name = ref.slice(4);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || !envNameAllowed(policy, name)) throw new SecretResolutionError(ENV_UNAVAILABLE);
    const value = process.env[name];
    if (value === undefined || value === '') throw new SecretResolutionError(ENV_UNAVAILABLE);
    return value;
  }
  if (ref.startsWith('file:')) {
    try {
      const real = realpathSync(resolve(ref.slice(5)));
      const directories = policy.secretDirectories.flatMap((dir) => {
        try {
          return [realpathSync(dir)];
        } catch {
          return [];
        }
      });
      if (!insideDirectories(real, directories)) throw new SecretResolutionError(FILE_UNAVAILABLE);
      // Checked before opening: opening a FIFO would block, and a device could be endless.
      const stat = statSync(real);
      if (!stat.isFile() || stat.size > MAX_SECRET_FILE_BYTES) throw new SecretResolutionError(FILE_UNAVAILABLE);
      const value = readFileSync(real, 'utf8').replace(/\r?\n$/, '');
      if (!value) throw new SecretResolutionError(FILE_UNAVAILABLE);
      return value;
    } catch {
      throw new SecretResolutionError(FILE_UNAVAILABLE);
    }
  }
  throw new SecretResolutionError('not a secret reference (use env:NAME or file:PATH)');
}
