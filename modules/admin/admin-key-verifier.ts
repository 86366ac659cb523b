/**
 * What the admin guard needs from access control: the key id of a gateway key that carries the given
 * scope, or the key's own 401/403 (a GatewayError). A port, so the admin context does not depend on
 * access (whose controllers depend on admin); access binds it to its authenticator.
 */
export abstract class AdminKeyVerifier {
  abstract authenticate(headers: Record<string, string | string[] | undefined>, scope: 'admin'): { keyId: string };
}
