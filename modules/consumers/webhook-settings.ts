import { ConfigurationError, SecretResolutionError, type SettingDeclaration, type SettingsEnv, declareSettings, resolveSecret, textSetting } from '../../src/kernel/index.js';
import { RELAY_EVENT_FAMILIES, RELAYABLE_EVENT_TYPES } from '../relay/index.js';

export const WEBHOOK_ENVIRONMENT = declareSettings('modules/consumers', {
  SWITCHYARD_WEBHOOK_URLS: {
    type: 'comma-separated `http[s]://` URLs',
    default: 'none: `switchyard consume webhooks` refuses to start',
    meaning: '`switchyard consume webhooks`: every selected event is POSTed to each of these URLs, under the outbound address policy',
  },
  SWITCHYARD_WEBHOOK_SECRET: {
    type: 'a secret reference (`env:NAME`, `file:/path`)',
    default: 'none: required',
    meaning: 'the HMAC-SHA256 key of the `x-switchyard-signature` header (`t=<unix seconds>,v1=<hex of HMAC(key, "<t>.<body>")>`)',
  },
  SWITCHYARD_WEBHOOK_EVENTS: {
    type: 'comma-separated event types or families (as SWITCHYARD_RELAY_EVENTS)',
    default: '`BudgetThresholdCrossed,ApiKeyRevoked,BreakerOpened`',
    meaning: 'the events `switchyard consume webhooks` delivers; an unknown name stops the start',
  },
  SWITCHYARD_WEBHOOK_ALLOW_PRIVATE_NETWORK: {
    type: '`true` or `false`',
    default: '`false`',
    meaning: 'let webhook URLs resolve to loopback, private and link-local addresses (metadata addresses stay refused)',
  },
  SWITCHYARD_WEBHOOK_ATTEMPTS: {
    type: 'integer 1–20',
    default: '`6`',
    meaning: 'POSTs of one event to one URL (the first included) before it is dead-lettered; the backoff doubles from SWITCHYARD_WEBHOOK_BACKOFF_MS',
  },
  SWITCHYARD_WEBHOOK_BACKOFF_MS: {
    type: 'milliseconds',
    default: '`1000`',
    meaning: 'the wait before the second POST of an event to a URL; doubled before each further one (capped at 60 s)',
  },
});

export const DEFAULT_WEBHOOK_EVENTS = ['BudgetThresholdCrossed', 'ApiKeyRevoked', 'BreakerOpened'];

export interface WebhookSettings {
  urls: string[];
  secret: string;
  events: string[];
  allowPrivateNetwork: boolean;
  attempts: number;
  backoffMs: number;
  timeoutMs: number;
}

export function readWebhookSettings(env: SettingsEnv): WebhookSettings {
  const urls = (textSetting(env, WEBHOOK_ENVIRONMENT.SWITCHYARD_WEBHOOK_URLS) ?? '').split(',').map((url) => url.trim()).filter(Boolean);
  if (urls.length === 0) throw new ConfigurationError('switchyard consume webhooks needs SWITCHYARD_WEBHOOK_URLS: the URLs to POST events to');
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigurationError(`SWITCHYARD_WEBHOOK_URLS: "${url}" is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigurationError(`SWITCHYARD_WEBHOOK_URLS: "${url}" is not http(s)`);
  }
  const secretRef = textSetting(env, WEBHOOK_ENVIRONMENT.SWITCHYARD_WEBHOOK_SECRET)?.trim();
  if (!secretRef) throw new ConfigurationError('switchyard consume webhooks needs SWITCHYARD_WEBHOOK_SECRET: a secret reference (env:NAME) to the HMAC key');
  let secret: string;
  try {
    secret = resolveSecret(secretRef);
  } catch (error) {
    if (!(error instanceof SecretResolutionError)) throw error;
    // The reference is named (it is not the secret); a value that is not one is never repeated: it may be the key itself.
    const named = /^(env|file):/.test(secretRef) ? ` ${secretRef}` : '';
    const hint = secretRef.startsWith('env:') ? '; by default only names ending in _KEY, _TOKEN or _CREDENTIALS are allowed, e.g. env:WEBHOOK_SIGNING_KEY' : '';
    throw new ConfigurationError(`SWITCHYARD_WEBHOOK_SECRET${named}: ${error.message}${hint}`);
  }
  const names = (textSetting(env, WEBHOOK_ENVIRONMENT.SWITCHYARD_WEBHOOK_EVENTS) ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  const events = new Set<string>();
  for (const name of names.length ? names : DEFAULT_WEBHOOK_EVENTS) {
    const family = RELAY_EVENT_FAMILIES[name];
    if (family) family.forEach((type) => events.add(type));
    else if (RELAYABLE_EVENT_TYPES.includes(name)) events.add(name);
    else throw new ConfigurationError(`SWITCHYARD_WEBHOOK_EVENTS names "${name}", neither an event type nor a family (families: ${Object.keys(RELAY_EVENT_FAMILIES).join(', ')}; each family's types: docs/events-out.md "Event families")`);
  }
  const allow = (textSetting(env, WEBHOOK_ENVIRONMENT.SWITCHYARD_WEBHOOK_ALLOW_PRIVATE_NETWORK) ?? 'false').trim();
  if (allow !== 'true' && allow !== 'false') throw new ConfigurationError('SWITCHYARD_WEBHOOK_ALLOW_PRIVATE_NETWORK must be true or false');
  const attempts = integer(env, WEBHOOK_ENVIRONMENT.SWITCHYARD_WEBHOOK_ATTEMPTS, 6, 1, 20);
  const backoffMs = integer(env, WEBHOOK_ENVIRONMENT.SWITCHYARD_WEBHOOK_BACKOFF_MS, 1000, 1, 600_000);
  return { urls, secret, events: [...events], allowPrivateNetwork: allow === 'true', attempts, backoffMs, timeoutMs: 10_000 };
}

function integer(env: SettingsEnv, setting: SettingDeclaration, fallback: number, min: number, max: number): number {
  const name = setting.name;
  const raw = textSetting(env, setting)?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigurationError(`${name} must be an integer from ${min} to ${max}`);
  return value;
}
