import {
  ConfigurationError, SecretResolutionError, type SettingsEnv, declareSettings, definedOnly, integerSetting, isSecretRef, positiveIntegerSetting,
  resolveSecret, textSetting,
} from '../../src/kernel/index.js';
import { type OidcRoleMap, parseOidcRoleMap } from './oidc/oidc-role-map.js';

/** The console's session and sign-in knobs (environment variables). */
export interface ConsoleKnobs {
  /** A session unused this long ends. */
  idleTimeoutMs: number;
  /** A session ends this long after sign-in, however much it is used. */
  maxAgeMs: number;
  /** Sign-in attempts (admin token or OIDC start) per client address per minute. */
  signInAttemptsPerMinute: number;
  /** `auto`: the cookie is `Secure` when the request came over TLS; `always`: whatever the listener (behind a TLS proxy). */
  secureCookie: 'auto' | 'always';
  /** Single sign-on; null = only the admin token signs in. */
  oidc: OidcSettings | null;
}

export interface OidcSettings {
  /** Shown on the sign-in button. */
  name: string;
  issuer: string;
  clientId: string;
  /** A secret reference (`env:NAME`, `file:PATH`), resolved when the console starts; null for a public client (PKCE only). */
  clientSecretRef: string | null;
  /** Where the issuer sends the browser back; null = derived from each request's host. */
  redirectUrl: string | null;
  scopes: string[];
  /** The claim holding the user's groups or roles (a string or an array of strings): the ID token's, else UserInfo's. */
  roleClaim: string;
  roleMap: OidcRoleMap;
  /** How far the issuer's clock may be ahead or behind when judging `exp`, `iat` and `nbf`. */
  clockToleranceSeconds: number;
}

export const DEFAULT_CONSOLE_KNOBS = Object.freeze({
  idleTimeoutMs: 1_800_000,
  maxAgeMs: 43_200_000,
  signInAttemptsPerMinute: 10,
  secureCookie: 'auto' as const,
  oidcName: 'Single sign-on',
  oidcScopes: ['openid', 'profile', 'email'],
  oidcRoleClaim: 'groups',
  oidcClockToleranceSeconds: 30,
});

const DEFAULTS = DEFAULT_CONSOLE_KNOBS;

export const CONSOLE_ENVIRONMENT = declareSettings('modules/console', {
  SWITCHYARD_CONSOLE_IDLE_TIMEOUT_SECONDS: {
    type: 'integer > 0 (seconds)',
    default: `\`${DEFAULTS.idleTimeoutMs / 1000}\` (30 minutes)`,
    meaning: 'a console session unused this long ends (every request with it starts the count again)',
  },
  SWITCHYARD_CONSOLE_SESSION_MAX_SECONDS: {
    type: 'integer > 0 (seconds)',
    default: `\`${DEFAULTS.maxAgeMs / 1000}\` (12 hours)`,
    meaning: 'a console session ends this long after sign-in, however much it is used',
  },
  SWITCHYARD_CONSOLE_SIGN_IN_ATTEMPTS_PER_MINUTE: {
    type: 'integer > 0',
    default: `\`${DEFAULTS.signInAttemptsPerMinute}\``,
    meaning: 'console sign-in attempts (admin token, or starting OIDC) per client address per minute; more get 429 with `retry-after`',
  },
  SWITCHYARD_CONSOLE_SECURE_COOKIE: {
    type: '`auto` | `always`',
    default: '`auto`',
    meaning: '`auto`: the session cookie is `Secure` when the request came over TLS; `always`: also over plain HTTP (a TLS-terminating proxy in front)',
  },
  SWITCHYARD_CONSOLE_OIDC_ISSUER: {
    type: 'URL',
    default: 'unset: no single sign-on, only the admin token',
    meaning: 'the OpenID provider for console sign-in (its `/.well-known/openid-configuration` is read); needs the client id too',
  },
  SWITCHYARD_CONSOLE_OIDC_CLIENT_ID: {
    type: 'text',
    default: 'unset',
    meaning: 'the console\'s client id at the issuer; ID tokens must name it as their audience',
  },
  SWITCHYARD_CONSOLE_OIDC_CLIENT_SECRET: {
    type: 'secret reference (`env:NAME` or `file:PATH`)',
    default: 'unset: a public client (PKCE only)',
    meaning: 'the client secret, sent to the token endpoint with HTTP Basic authentication',
  },
  SWITCHYARD_CONSOLE_OIDC_REDIRECT_URL: {
    type: 'URL ending in `/console/api/oidc/callback`',
    default: 'unset: derived from the request (`<scheme>://<host>/console/api/oidc/callback`)',
    meaning: 'the redirect URI registered at the issuer; set it when the gateway is reached through a proxy',
  },
  SWITCHYARD_CONSOLE_OIDC_SCOPES: {
    type: 'space-separated scopes, including `openid`',
    default: `\`${DEFAULTS.oidcScopes.join(' ')}\``,
    meaning: 'the scopes asked for; add the one that releases the role claim (often `groups`)',
  },
  SWITCHYARD_CONSOLE_OIDC_ROLE_CLAIM: {
    type: 'claim name',
    default: `\`${DEFAULTS.oidcRoleClaim}\``,
    meaning: 'the claim that carries the user\'s groups or roles (a string or an array of strings): read from the ID token, or from the issuer\'s UserInfo endpoint when the ID token lacks it',
  },
  SWITCHYARD_CONSOLE_OIDC_ROLE_MAP: {
    type: '`value=role,value=role` (roles: admin, operator, finance, auditor, viewer)',
    default: 'unset: nobody gets a role (every OIDC sign-in is refused)',
    meaning: 'which claim values give which console role; a user matching several gets the strongest, one matching none is refused',
  },
  SWITCHYARD_CONSOLE_OIDC_NAME: {
    type: 'text',
    default: `\`${DEFAULTS.oidcName}\``,
    meaning: 'the name the sign-in page shows on the single sign-on button',
  },
  SWITCHYARD_CONSOLE_OIDC_CLOCK_TOLERANCE_SECONDS: {
    type: 'integer ≥ 0 (seconds)',
    default: `\`${DEFAULTS.oidcClockToleranceSeconds}\``,
    meaning: 'how far the issuer\'s clock may differ from the gateway\'s when an ID token\'s expiry and issue time are judged',
  },
});

/** The console's resolved settings, and where its shared state lives. */
export interface ConsoleSettings extends ConsoleKnobs {
  /** The OIDC client secret behind its reference, resolved once at start; null without one. */
  oidcClientSecret: string | null;
  /** Sessions, sign-in attempts and pending OIDC sign-ins in Redis (shared by every node); null = this process's memory. */
  redisUrl: string | null;
  /** Prefix of the console's Redis keys (SWITCHYARD_REDIS_NAMESPACE). */
  namespace: string;
  nodeId: string;
}

/** DI token of the console's resolved settings. */
export const CONSOLE_SETTINGS = Symbol('CONSOLE_SETTINGS');

/** Only the variables that are set, checked; OIDC needs the issuer and the client id together. */
export function readConsoleOverrides(env: SettingsEnv): Partial<ConsoleKnobs> {
  const E = CONSOLE_ENVIRONMENT;
  const seconds = (value: number | undefined) => (value === undefined ? undefined : value * 1000);
  const secure = (textSetting(env, E.SWITCHYARD_CONSOLE_SECURE_COOKIE) ?? '').toLowerCase();
  if (secure !== '' && secure !== 'auto' && secure !== 'always') throw new ConfigurationError('SWITCHYARD_CONSOLE_SECURE_COOKIE must be auto or always');
  return definedOnly({
    idleTimeoutMs: seconds(positiveIntegerSetting(env, E.SWITCHYARD_CONSOLE_IDLE_TIMEOUT_SECONDS)),
    maxAgeMs: seconds(positiveIntegerSetting(env, E.SWITCHYARD_CONSOLE_SESSION_MAX_SECONDS)),
    signInAttemptsPerMinute: positiveIntegerSetting(env, E.SWITCHYARD_CONSOLE_SIGN_IN_ATTEMPTS_PER_MINUTE),
    secureCookie: secure === '' ? undefined : (secure as 'auto' | 'always'),
    oidc: readOidcSettings(env) ?? undefined,
  });
}

function readOidcSettings(env: SettingsEnv): OidcSettings | null {
  const E = CONSOLE_ENVIRONMENT;
  const issuer = textSetting(env, E.SWITCHYARD_CONSOLE_OIDC_ISSUER) || null;
  const clientId = textSetting(env, E.SWITCHYARD_CONSOLE_OIDC_CLIENT_ID) || null;
  if (issuer === null && clientId === null) return null;
  if (issuer === null || clientId === null) {
    throw new ConfigurationError('console single sign-on needs both SWITCHYARD_CONSOLE_OIDC_ISSUER and SWITCHYARD_CONSOLE_OIDC_CLIENT_ID');
  }
  requireUrl('SWITCHYARD_CONSOLE_OIDC_ISSUER', issuer);
  const clientSecretRef = textSetting(env, E.SWITCHYARD_CONSOLE_OIDC_CLIENT_SECRET) || null;
  if (clientSecretRef !== null && !isSecretRef(clientSecretRef)) {
    throw new ConfigurationError('SWITCHYARD_CONSOLE_OIDC_CLIENT_SECRET must be a secret reference (env:NAME or file:PATH), never the secret itself');
  }
  const redirectUrl = textSetting(env, E.SWITCHYARD_CONSOLE_OIDC_REDIRECT_URL) || null;
  if (redirectUrl !== null) requireUrl('SWITCHYARD_CONSOLE_OIDC_REDIRECT_URL', redirectUrl);
  const scopes = (textSetting(env, E.SWITCHYARD_CONSOLE_OIDC_SCOPES) || DEFAULTS.oidcScopes.join(' ')).split(/\s+/).filter(Boolean);
  if (!scopes.includes('openid')) throw new ConfigurationError('SWITCHYARD_CONSOLE_OIDC_SCOPES must include openid');
  return {
    name: textSetting(env, E.SWITCHYARD_CONSOLE_OIDC_NAME) || DEFAULTS.oidcName,
    issuer,
    clientId,
    clientSecretRef,
    redirectUrl,
    scopes,
    roleClaim: textSetting(env, E.SWITCHYARD_CONSOLE_OIDC_ROLE_CLAIM) || DEFAULTS.oidcRoleClaim,
    roleMap: parseOidcRoleMap(textSetting(env, E.SWITCHYARD_CONSOLE_OIDC_ROLE_MAP) ?? '', 'SWITCHYARD_CONSOLE_OIDC_ROLE_MAP'),
    clockToleranceSeconds: integerSetting(env, E.SWITCHYARD_CONSOLE_OIDC_CLOCK_TOLERANCE_SECONDS) ?? DEFAULTS.oidcClockToleranceSeconds,
  };
}

function requireUrl(name: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigurationError(`${name} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigurationError(`${name} must be an absolute http(s) URL`);
}

export function resolveConsoleSettings(overrides: Partial<ConsoleKnobs> | undefined, redisUrl: string | null, namespace: string, nodeId: string): ConsoleSettings {
  const knobs: ConsoleKnobs = {
    idleTimeoutMs: DEFAULTS.idleTimeoutMs,
    maxAgeMs: DEFAULTS.maxAgeMs,
    signInAttemptsPerMinute: DEFAULTS.signInAttemptsPerMinute,
    secureCookie: DEFAULTS.secureCookie,
    oidc: null,
    ...overrides,
  };
  return { ...knobs, oidcClientSecret: knobs.oidc?.clientSecretRef ? clientSecret(knobs.oidc.clientSecretRef) : null, redisUrl, namespace, nodeId };
}

/** Resolved at start, so a reference that cannot be read stops the start with a clear message rather than failing every sign-in. */
function clientSecret(ref: string): string {
  try {
    return resolveSecret(ref);
  } catch (error) {
    if (error instanceof SecretResolutionError) throw new ConfigurationError(`SWITCHYARD_CONSOLE_OIDC_CLIENT_SECRET (${ref}) cannot be read: ${error.message}`);
    throw error;
  }
}
