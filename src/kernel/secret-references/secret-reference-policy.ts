import { delimiter, isAbsolute, resolve } from 'node:path';
import { declareSettings } from '../setting-declaration.js';
import { type SettingsEnv, textSetting } from '../settings.js';

/**
 * Which values a secret reference may read. A reference is configured by whoever holds the admin token
 * (or writes the YAML), and its value is sent to the provider's base URL: without a bound, `env:ADMIN_TOKEN`
 * or `file:/etc/passwd` would deliver the gateway's own secrets to a host of the caller's choosing.
 *
 * - `env:NAME` only for names that `SWITCHYARD_SECRET_ENV` allows (comma-separated; `*` matches any run
 *   of characters; a leading `!` excludes). The gateway's own settings are never readable, whatever the list.
 * - `file:PATH` only for regular files whose real path (symbolic links followed) lies under one of the
 *   directories of `SWITCHYARD_SECRETS_DIR` (separated by the platform's path delimiter, `:` on POSIX).
 */
export interface SecretReferencePolicy {
  /** Patterns in order; the last one that matches a name decides (`!` patterns exclude). */
  readonly envPatterns: readonly string[];
  /** Absolute directories; a file must lie strictly inside one of them. */
  readonly secretDirectories: readonly string[];
}

export const DEFAULT_SECRET_ENV =
  '*_KEY,*_TOKEN,*_CREDENTIALS,!AWS_SECRET_ACCESS_KEY,!AWS_SESSION_TOKEN,!GITHUB_TOKEN,!ACTIONS_RUNTIME_TOKEN,!ACTIONS_ID_TOKEN_REQUEST_TOKEN';

/** What `env:` and `file:` references may read. */
export const SECRET_REFERENCE_ENVIRONMENT = declareSettings('src/kernel/secret-references', {
  SWITCHYARD_SECRET_ENV: {
    type: 'comma-separated names and patterns',
    default: `\`${DEFAULT_SECRET_ENV}\``,
    meaning:
      'environment variables an `env:NAME` reference may read: `*` matches any run of characters, a leading `!` excludes, the last match decides. ' +
      "The gateway's own settings (ADMIN_TOKEN, DATABASE_URL, REDIS_URL, CLICKHOUSE_URL, PGPASSWORD, PGPASSFILE, SWITCHYARD_*) are never readable, whatever the list says",
  },
  SWITCHYARD_SECRETS_DIR: {
    type: 'absolute directories, separated by `:`',
    default: '`/run/secrets` and `secrets/` in SWITCHYARD_DATA_DIR',
    meaning: 'directories under which a `file:PATH` reference may read (its real path, symbolic links followed, must lie inside one); never `/`',
  },
});

/** The gateway's own settings: never readable through a reference, whatever SWITCHYARD_SECRET_ENV says. */
const RESERVED_ENV = ['ADMIN_TOKEN', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_URL', 'PGPASSWORD', 'PGPASSFILE', 'SWITCHYARD_*'];

/**
 * The policy the environment asks for. Defaults: the names in DEFAULT_SECRET_ENV (so `env:OPENAI_API_KEY`
 * and `env:ACME_APP_KEY` work), and files under `/run/secrets` (Docker and Kubernetes secrets) and under
 * `secrets/` in the data directory (where the built-in demo keeps its key).
 */
export function secretReferencePolicy(env: SettingsEnv, dataDir: string | null): SecretReferencePolicy {
  const envPatterns = (textSetting(env, SECRET_REFERENCE_ENVIRONMENT.SWITCHYARD_SECRET_ENV) ?? DEFAULT_SECRET_ENV)
    .split(',')
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern.length > 0);
  for (const pattern of envPatterns) {
    if (!/^!?[A-Za-z0-9_*]+$/.test(pattern)) {
      throw new SecretPolicyError(`SWITCHYARD_SECRET_ENV: '${pattern}' is not a variable name or pattern (letters, digits, _ and *, optionally after !)`);
    }
  }
  const configured = textSetting(env, SECRET_REFERENCE_ENVIRONMENT.SWITCHYARD_SECRETS_DIR);
  const directories = configured !== undefined
    ? configured.split(delimiter).map((dir) => dir.trim()).filter((dir) => dir.length > 0)
    : ['/run/secrets', ...(dataDir && dataDir !== ':memory:' ? [resolve(dataDir, 'secrets')] : [])];
  for (const dir of directories) {
    if (!isAbsolute(dir)) throw new SecretPolicyError(`SWITCHYARD_SECRETS_DIR: '${dir}' must be an absolute path`);
    if (resolve(dir) === '/') throw new SecretPolicyError('SWITCHYARD_SECRETS_DIR must not be the root directory');
  }
  return { envPatterns, secretDirectories: directories.map((dir) => resolve(dir)) };
}

export class SecretPolicyError extends Error {
  override readonly name = 'SecretPolicyError';
}

export function envNameAllowed(policy: SecretReferencePolicy, name: string): boolean {
  if (RESERVED_ENV.some((pattern) => matches(pattern, name))) return false;
  let allowed = false;
  for (const pattern of policy.envPatterns) {
    if (pattern.startsWith('!')) {
      if (matches(pattern.slice(1), name)) allowed = false;
    } else if (matches(pattern, name)) {
      allowed = true;
    }
  }
  return allowed;
}

/** Both sides must already have their symbolic links resolved. */
export function insideDirectories(realPath: string, realDirectories: readonly string[]): boolean {
  return realDirectories.some((dir) => realPath.startsWith(dir.endsWith('/') ? dir : `${dir}/`));
}

function matches(pattern: string, name: string): boolean {
  const expression = new RegExp(`^${pattern.split('*').map(escape).join('.*')}$`);
  return expression.test(name);
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
