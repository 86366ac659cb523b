import { Agent, request } from 'undici';
import { type HostResolver, guardedConnector } from '../../providers/index.js';

export interface WebhookTarget {
  url: string;
  /** The webhook's `allowPrivateNetwork`: loopback, private and link-local addresses allowed (never metadata). */
  allowPrivateNetwork: boolean;
}

export interface WebhookPostOptions {
  timeoutMs: number;
  /** How host names resolve (the system resolver unless a test injects one). */
  resolve?: HostResolver;
  /** Told the host, the refused address and why, for the operator's log. */
  onRefused?: (host: string, address: string, reason: string) => void;
}

/**
 * POSTs one webhook delivery through the outbound address policy, judged on the address actually
 * connected to (as provider calls are): a name that resolves to a metadata, reserved or — unless allowed
 * — private address is never connected to. Resolves to the HTTP status; rejects when nothing was answered.
 */
export async function postWebhook(target: WebhookTarget, headers: Record<string, string>, body: string, options: WebhookPostOptions): Promise<number> {
  const dispatcher = new Agent({
    connect: guardedConnector({ timeoutMs: options.timeoutMs, allowPrivateNetwork: target.allowPrivateNetwork, resolve: options.resolve, onRefused: options.onRefused }),
  });
  try {
    const response = await request(target.url, { method: 'POST', headers, body, dispatcher, signal: AbortSignal.timeout(options.timeoutMs) });
    await response.body.dump();
    return response.statusCode;
  } finally {
    void dispatcher.close();
  }
}
