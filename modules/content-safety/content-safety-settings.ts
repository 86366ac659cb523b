import { ConfigurationError, type SettingsEnv, declareSettings, positiveIntegerSetting, resolveSecret, SECRET_REFERENCE_SHAPE, textSetting } from '../../src/kernel/index.js';
import { MIN_PII_KEY_LENGTH } from './placeholder-keys.js';

/** How long a session's placeholder mappings live in Redis after the last turn that used them. */
export const DEFAULT_SESSION_TTL_SECONDS = 86_400;

export const CONTENT_SAFETY_ENVIRONMENT = declareSettings('modules/content-safety', {
  SWITCHYARD_PII_KEY: {
    type: `secret reference: \`env:NAME\` or \`file:PATH\` (at least ${MIN_PII_KEY_LENGTH} characters of secret)`,
    default: 'unset: request-scope placeholders use a random per-process key; a policy with `tokenScope: session` is refused',
    meaning: 'the key of tokenized placeholders (MAC) and of the session vault (AES-GCM in Redis); the same on every node',
  },
  SWITCHYARD_PII_SESSION_TTL_SECONDS: {
    type: 'integer > 0 (seconds)',
    default: `\`${DEFAULT_SESSION_TTL_SECONDS}\` (a day)`,
    meaning: "how long a session's placeholder mappings stay in Redis after the last turn that used them (`tokenScope: session`)",
  },
});

/** The content-safety context's resolved settings. */
export interface ContentSafetySettings {
  /** The resolved operator key, or null (request scope only, with a per-process key). */
  piiKey: string | null;
  sessionTtlSeconds: number;
  /** Session vaults live in Redis; null: no session scope. */
  redisUrl: string | null;
  nodeId: string;
}

export const CONTENT_SAFETY_SETTINGS = Symbol('CONTENT_SAFETY_SETTINGS');

export interface ContentSafetyOverrides {
  piiKeyReference?: string;
  sessionTtlSeconds?: number;
}

/** Only what is set; the key must be a secret reference, never the key itself. */
export function readContentSafetyOverrides(env: SettingsEnv): ContentSafetyOverrides {
  const reference = textSetting(env, CONTENT_SAFETY_ENVIRONMENT.SWITCHYARD_PII_KEY) || undefined;
  if (reference !== undefined && !SECRET_REFERENCE_SHAPE.test(reference)) {
    throw new ConfigurationError('SWITCHYARD_PII_KEY must be a secret reference (env:NAME or file:PATH), never the key itself');
  }
  const overrides: ContentSafetyOverrides = {};
  if (reference !== undefined) overrides.piiKeyReference = reference;
  const ttl = positiveIntegerSetting(env, CONTENT_SAFETY_ENVIRONMENT.SWITCHYARD_PII_SESSION_TTL_SECONDS);
  if (ttl !== undefined) overrides.sessionTtlSeconds = ttl;
  return overrides;
}

/** Resolves the key's reference once, at start: a reference that does not resolve, or a short key, stops the start. */
export function resolveContentSafetySettings(overrides: ContentSafetyOverrides | undefined, redisUrl: string | null, nodeId: string): ContentSafetySettings {
  let piiKey: string | null = null;
  if (overrides?.piiKeyReference) {
    try {
      piiKey = resolveSecret(overrides.piiKeyReference).trim();
    } catch (error) {
      throw new ConfigurationError(`SWITCHYARD_PII_KEY: ${(error as Error).message}`);
    }
    if (piiKey.length < MIN_PII_KEY_LENGTH) throw new ConfigurationError(`SWITCHYARD_PII_KEY: the key must be at least ${MIN_PII_KEY_LENGTH} characters of secret`);
  }
  return { piiKey, sessionTtlSeconds: overrides?.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS, redisUrl, nodeId };
}
