import { readFileSync } from 'node:fs';

/**
 * Secrets are configured by reference: `env:NAME` reads an environment variable, `file:PATH` a file
 * (trailing newline trimmed). Only the reference is ever stored in events or returned by APIs.
 */
export function isSecretRef(value: string): boolean {
  return /^env:[A-Za-z_][A-Za-z0-9_]*$/.test(value) || /^file:.+/.test(value);
}

export class SecretResolutionError extends Error {
  override readonly name = 'SecretResolutionError';
}

export function resolveSecret(ref: string): string {
  if (ref.startsWith('env:')) {
    const name = ref.slice(4);
    const value = process.env[name];
    if (value === undefined || value === '') throw new SecretResolutionError(`environment variable ${name} is not set`);
    return value;
  }
  if (ref.startsWith('file:')) {
    const path = ref.slice(5);
    try {
      const value = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
      if (!value) throw new SecretResolutionError(`secret file ${path} is empty`);
      return value;
    } catch (error) {
      if (error instanceof SecretResolutionError) throw error;
      throw new SecretResolutionError(`secret file ${path} cannot be read`);
    }
  }
  throw new SecretResolutionError('not a secret reference (use env:NAME or file:PATH)');
}
