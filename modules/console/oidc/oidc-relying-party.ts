import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, type JWTPayload, jwtVerify } from 'jose';
import type { OidcSettings } from '../console-settings.js';

/** What the issuer's discovery document says, as far as the console uses it. */
interface IssuerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  id_token_signing_alg_values_supported?: string[];
}

/** What a sign-in needs to remember between sending the browser to the issuer and its return. */
export interface PendingOidcSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

/** A refused OIDC sign-in: `code` goes to the browser (`?signInError=`) and the event, `detail` to the event and log. */
export class OidcSignInError extends Error {
  override readonly name = 'OidcSignInError';
  constructor(
    readonly code: 'issuer_error' | 'invalid_id_token' | 'invalid_state' | 'no_role' | 'access_denied',
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

/** Issuer calls are bounded: a hung issuer must not hold a sign-in (or a connection) open for long. */
const ISSUER_TIMEOUT_MS = 10_000;
/** Signing algorithms accepted whatever the issuer advertises: asymmetric only (a client secret never signs an ID token here). */
const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * The console as an OpenID Connect relying party: authorization code flow with PKCE (S256), `state`
 * against forged returns and `nonce` against replayed ID tokens. The ID token is verified here, never
 * trusted because it came over TLS: signature by a key of the issuer's JWKS, issuer, audience (our client
 * id, and `azp` when there are several), expiry and issue time within the clock tolerance, nonce.
 */
export class OidcRelyingParty {
  private metadata: Promise<IssuerMetadata> | null = null;
  private keys: ReturnType<typeof createRemoteJWKSet> | null = null;

  constructor(
    private readonly settings: OidcSettings,
    /** The resolved client secret, or null for a public client. */
    private readonly clientSecret: string | null,
  ) {}

  /** The issuer's authorization URL for a new sign-in, and what to remember until the browser returns. */
  async begin(redirectUri: string): Promise<{ url: string; pending: PendingOidcSignIn }> {
    const metadata = await this.discover();
    const pending: PendingOidcSignIn = { state: random(), nonce: random(), codeVerifier: random(), redirectUri };
    const url = new URL(metadata.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.settings.clientId,
      redirect_uri: redirectUri,
      scope: this.settings.scopes.join(' '),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: createHash('sha256').update(pending.codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return { url: url.toString(), pending };
  }

  /** Exchanges the code for tokens and returns the verified ID token's claims. */
  async complete(pending: PendingOidcSignIn, code: string): Promise<JWTPayload> {
    const metadata = await this.discover();
    const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: pending.redirectUri, code_verifier: pending.codeVerifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (this.clientSecret !== null) {
      // RFC 6749 §2.3.1: both parts form-urlencoded before Basic encoding.
      headers.authorization = `Basic ${Buffer.from(`${formEncode(this.settings.clientId)}:${formEncode(this.clientSecret)}`).toString('base64')}`;
    } else {
      body.set('client_id', this.settings.clientId);
    }
    let tokens: { id_token?: unknown; access_token?: unknown };
    try {
      const response = await fetch(metadata.token_endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(ISSUER_TIMEOUT_MS), redirect: 'error' });
      if (!response.ok) {
        const error = await response.json().catch(() => ({})) as { error?: unknown };
        throw new OidcSignInError('issuer_error', `the token endpoint answered ${response.status}${typeof error.error === 'string' ? ` (${error.error.slice(0, 64)})` : ''}`);
      }
      tokens = await response.json() as typeof tokens;
    } catch (error) {
      if (error instanceof OidcSignInError) throw error;
      throw new OidcSignInError('issuer_error', `the token endpoint could not be reached: ${(error as Error).message}`);
    }
    if (typeof tokens.id_token !== 'string') throw new OidcSignInError('invalid_id_token', 'the token endpoint returned no ID token');
    const claims = await this.verify(tokens.id_token, pending.nonce, metadata);
    if (claims[this.settings.roleClaim] !== undefined || !metadata.userinfo_endpoint || typeof tokens.access_token !== 'string') return claims;
    // Issuers that follow OpenID Connect Core §5.4 to the letter put the claims of the scopes asked for in the UserInfo
    // answer, not in the ID token, whenever an access token is issued: the role claim (that one only — who the user is
    // stays what the ID token says, wherever the role came from) is then read from there.
    const userInfo = await this.userInfo(metadata.userinfo_endpoint, tokens.access_token, claims.sub!);
    return { ...claims, [this.settings.roleClaim]: userInfo[this.settings.roleClaim] };
  }

  /**
   * The UserInfo endpoint's claims for the access token (JSON; a signed or encrypted answer is not read), after
   * checking that they are about the ID token's subject (OpenID Connect Core §5.3.2: otherwise they must not be used).
   */
  private async userInfo(endpoint: string, accessToken: string, subject: string): Promise<Record<string, unknown>> {
    let answer: Record<string, unknown>;
    try {
      const response = await fetch(endpoint, {
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, signal: AbortSignal.timeout(ISSUER_TIMEOUT_MS), redirect: 'error',
      });
      if (!response.ok) throw new OidcSignInError('issuer_error', `the UserInfo endpoint answered ${response.status}`);
      const type = response.headers.get('content-type') ?? '';
      if (!/^application\/json\b/i.test(type)) throw new OidcSignInError('issuer_error', `the UserInfo endpoint answered ${type.split(';')[0] || 'no content type'}, not JSON (signed or encrypted UserInfo is not supported)`);
      answer = await response.json() as Record<string, unknown>;
    } catch (error) {
      if (error instanceof OidcSignInError) throw error;
      throw new OidcSignInError('issuer_error', `the UserInfo endpoint could not be read: ${(error as Error).message}`);
    }
    if (answer === null || typeof answer !== 'object' || answer.sub !== subject) {
      throw new OidcSignInError('invalid_id_token', 'the UserInfo answer is about another subject than the ID token');
    }
    return answer;
  }

  private async verify(idToken: string, nonce: string, metadata: IssuerMetadata): Promise<JWTPayload> {
    const advertised = metadata.id_token_signing_alg_values_supported ?? ['RS256'];
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(idToken, this.keySet(metadata), {
        issuer: metadata.issuer,
        audience: this.settings.clientId,
        algorithms: advertised.filter((algorithm) => ACCEPTED_ALGORITHMS.includes(algorithm)),
        clockTolerance: this.settings.clockToleranceSeconds,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (error) {
      throw new OidcSignInError('invalid_id_token', verificationProblem(error));
    }
    if (claims.nonce !== nonce) throw new OidcSignInError('invalid_id_token', 'nonce does not match this sign-in');
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== this.settings.clientId) {
      throw new OidcSignInError('invalid_id_token', 'audience: several audiences and azp is not this client');
    }
    return claims;
  }

  private keySet(metadata: IssuerMetadata): ReturnType<typeof createRemoteJWKSet> {
    this.keys ??= createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: ISSUER_TIMEOUT_MS });
    return this.keys;
  }

  /** The discovery document, read once; a failed read is retried at the next sign-in. */
  private discover(): Promise<IssuerMetadata> {
    this.metadata ??= readDiscovery(this.settings.issuer).catch((error: unknown) => {
      this.metadata = null;
      throw error;
    });
    return this.metadata;
  }
}

async function readDiscovery(issuer: string): Promise<IssuerMetadata> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  let document: Partial<IssuerMetadata>;
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(ISSUER_TIMEOUT_MS), redirect: 'error' });
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    document = await response.json() as Partial<IssuerMetadata>;
  } catch (error) {
    throw new OidcSignInError('issuer_error', `the issuer's discovery document could not be read: ${(error as Error).message}`);
  }
  return validDiscovery(issuer, document);
}

/** The discovery document, checked: its issuer is the configured one, its endpoints are there (and https for an https issuer). */
export function validDiscovery(issuer: string, document: Partial<IssuerMetadata>): IssuerMetadata {
  // OpenID Connect Discovery §4.3: the issuer in the document is exactly the one configured.
  if (document.issuer !== issuer) throw new OidcSignInError('issuer_error', `the discovery document names the issuer ${String(document.issuer)}, not ${issuer}`);
  for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    if (typeof document[field] !== 'string') throw new OidcSignInError('issuer_error', `the discovery document has no ${field}`);
  }
  // An issuer reached over TLS does not send the code, the client secret or the access token anywhere in clear.
  if (new URL(issuer).protocol === 'https:') {
    for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint'] as const) {
      const value = document[field];
      if (value !== undefined && !/^https:\/\//i.test(String(value))) throw new OidcSignInError('issuer_error', `the discovery document's ${field} is not an https URL`);
    }
  }
  return document as IssuerMetadata;
}

/** Which check an ID token failed, in words for the event and the log (never the token). */
function verificationProblem(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `claim ${error.claim}: ${error.reason}`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'signing algorithm not allowed';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the issuer matches';
  return (error as Error)?.message ?? 'not a valid JWT';
}

function random(): string {
  return randomBytes(32).toString('base64url');
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}
