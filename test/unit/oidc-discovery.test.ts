import { OidcSignInError, validDiscovery } from '../../modules/console/oidc/oidc-relying-party.js';

/** The issuer's discovery document as the console's OIDC sign-in accepts it (modules/console/oidc). */
const ISSUER = 'https://id.example.com/realms/acme';
const document = (endpoints: Record<string, string | undefined> = {}) => ({
  issuer: ISSUER,
  authorization_endpoint: `${ISSUER}/auth`, token_endpoint: `${ISSUER}/token`, jwks_uri: `${ISSUER}/certs`, userinfo_endpoint: `${ISSUER}/userinfo`,
  ...endpoints,
});

describe('the discovery document', () => {
  test('an https issuer with https endpoints is accepted as it is', () => {
    expect(validDiscovery(ISSUER, document())).toEqual(document());
  });

  test.each(['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'userinfo_endpoint'])('an https issuer naming an http %s is refused', (field) => {
    const refusal = () => validDiscovery(ISSUER, document({ [field]: `http://id.example.com/${field}` }));
    expect(refusal).toThrow(OidcSignInError);
    expect(refusal).toThrow(`the discovery document's ${field} is not an https URL`);
  });

  test('another issuer, or a missing endpoint, is refused; a document without UserInfo is fine', () => {
    expect(() => validDiscovery(ISSUER, document({ issuer: 'https://evil.example.com' }))).toThrow(/names the issuer https:\/\/evil\.example\.com/);
    expect(() => validDiscovery(ISSUER, document({ token_endpoint: undefined }))).toThrow('the discovery document has no token_endpoint');
    expect(validDiscovery(ISSUER, document({ userinfo_endpoint: undefined })).userinfo_endpoint).toBeUndefined();
  });

  test('an http issuer (a local test issuer) may name http endpoints', () => {
    const local = 'http://127.0.0.1:9000';
    expect(validDiscovery(local, { issuer: local, authorization_endpoint: `${local}/auth`, token_endpoint: `${local}/token`, jwks_uri: `${local}/jwks` }).issuer).toBe(local);
  });
});
