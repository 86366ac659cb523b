/** The broker a relay publishes to, by the scheme of SWITCHYARD_RELAY_URL. */
export type RelayTransport = 'nats' | 'amqp' | 'kafka';

/** How the relay names each broker in its logs and errors. */
export const RELAY_BROKER_NAMES: Readonly<Record<RelayTransport, string>> = { nats: 'NATS', amqp: 'RabbitMQ', kafka: 'Kafka' };

/**
 * `nats://user:pass@host:4222`: the credentials for the connection's options (the client takes no URL
 * credentials), decoded; the password is everything after the first colon. readRelaySettings checked they decode.
 */
export function natsCredentials(url: string): { user?: string; pass?: string } {
  const authority = url.replace(/^nats:\/\//i, '').split(/[/?#]/, 1)[0];
  const at = authority.lastIndexOf('@');
  if (at < 0) return {};
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  const [user, pass] = colon < 0 ? [userinfo, ''] : [userinfo.slice(0, colon), userinfo.slice(colon + 1)];
  return { user: decodeURIComponent(user), pass: decodeURIComponent(pass) };
}
