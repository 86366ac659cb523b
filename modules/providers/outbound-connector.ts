import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { type LookupFunction, isIP } from 'node:net';
import { buildConnector } from 'undici';
import { addressRefusal, classifyAddress } from '../catalog/index.js';
import { ProviderError } from '../canonical/index.js';

/** Every address a host name resolves to (the system resolver by default; tests inject their own). */
export type HostResolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Raised inside the connector; becomes an OutboundAddressRefused for routing and the client. */
export class OutboundPolicyViolation extends Error {
  override readonly name = 'OutboundPolicyViolation';
  readonly code = 'ERR_OUTBOUND_ADDRESS_REFUSED';
  constructor(readonly reason: string) {
    super(`the outbound address policy refused the connection: ${reason}`);
  }
}

/**
 * A provider connection the outbound address policy refused. A typed connection failure (the next route
 * may still answer) whose message names no address: the operator finds the address in the gateway's log.
 */
export class OutboundAddressRefused extends ProviderError {
  constructor() {
    super('connection', 'the provider address is not allowed by the outbound address policy');
  }
}

export interface GuardedConnectorOptions {
  timeoutMs: number;
  allowPrivateNetwork: boolean;
  resolve?: HostResolver;
  /** Told the host, the refused address and why, for the operator's log. */
  onRefused?: (host: string, address: string, reason: string) => void;
}

/**
 * An undici connector that applies the outbound address policy to the address actually connected to.
 * Host names go through our own `lookup`: every address DNS returns is checked, and the socket connects
 * only to addresses that passed (net uses what lookup returns, so a second resolution cannot slip in
 * another address; each new connection resolves and is checked again, so a rebinding is caught).
 * Node skips `lookup` for IP literals, so those are checked before connecting.
 */
export function guardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const resolve = options.resolve ?? systemResolver;
  const refusalOf = (address: string) => addressRefusal(classifyAddress(address), options.allowPrivateNetwork);

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (resolved) => {
        const family = lookupOptions.family === 4 || lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 6 || lookupOptions.family === 'IPv6' ? 6 : 0;
        const addresses = family ? resolved.filter((entry) => entry.family === family) : resolved;
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
          return;
        }
        // One refused address refuses the name: a name that also points inside is not a provider's.
        for (const entry of addresses) {
          const refusal = refusalOf(entry.address);
          if (refusal) {
            options.onRefused?.(hostname, entry.address, refusal);
            callback(new OutboundPolicyViolation(refusal), '', 0);
            return;
          }
        }
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };

  const connect = buildConnector({ timeout: options.timeoutMs, lookup });
  return (connectOptions, callback) => {
    if (isIP(connectOptions.hostname)) {
      const refusal = refusalOf(connectOptions.hostname);
      if (refusal) {
        options.onRefused?.(connectOptions.hostname, connectOptions.hostname, refusal);
        process.nextTick(() => callback(new OutboundPolicyViolation(refusal), null));
        return;
      }
    }
    connect(connectOptions, callback);
  };
}
