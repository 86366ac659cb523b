import { Agent, request } from 'undici';
import type { PolicyWebhook, RemoteCheckDirection } from '../../events/index.js';
import { resolveSecret } from '../../src/kernel/index.js';
import { type HostResolver, OutboundPolicyViolation, WEBHOOK_SIGNATURE_HEADER, guardedConnector, webhookSignature } from '../providers/index.js';

/** What an operator's webhook answered: the text may go on, or not (with a reason for the client). */
export interface RemoteVerdict {
  action: 'allow' | 'block';
  reason?: string;
}

/** Why a remote check gave no verdict: the bounded `reason` label of the errors metric. */
/** `unavailable`: a moderation alias that could not answer (no route, every attempt failed). */
export type RemoteCheckFailureReason = 'timeout' | 'connection' | 'refused' | 'status' | 'answer' | 'secret' | 'unavailable';

/** A remote check that gave no verdict. Its message names no URL, address or text. */
export class RemoteCheckFailure extends Error {
  override readonly name = 'RemoteCheckFailure';
  constructor(readonly reason: RemoteCheckFailureReason, message: string) {
    super(message);
  }
}

/** What the webhook is told: the request's identity, the policy and the texts (as the local checks left them). */
export interface WebhookCheckRequest {
  requestId: string;
  tenantId: string;
  direction: RemoteCheckDirection;
  texts: readonly string[];
}

export interface WebhookCallOptions {
  /** How host names resolve (the system resolver unless a test injects one). */
  resolve?: HostResolver;
  /** Told the host, the refused address and why, for the operator's log. */
  onRefused?: (host: string, address: string, reason: string) => void;
}

/** An answer is a small JSON verdict; a larger one is not a verdict and is not read further. */
const MAX_ANSWER_BYTES = 16 * 1024;
/** A reason is shown to the client: kept short and printable. */
const MAX_REASON_LENGTH = 200;

/**
 * Asks an operator's webhook about a request's text: POST `{ type: "content.check", requestId, tenantId, policy,
 * direction, texts }` (signed with the policy's secret when it has one, as budget webhooks are), through the
 * outbound address policy judged on the address actually connected to, within the webhook's timeout. Resolves to
 * the verdict of a 2xx `{ action: allow | block, reason? }`; rejects with a RemoteCheckFailure otherwise.
 */
export async function askWebhookGuardrail(check: PolicyWebhook, subject: WebhookCheckRequest, options: WebhookCallOptions = {}): Promise<RemoteVerdict> {
  const { webhook } = check;
  const body = JSON.stringify({
    type: 'content.check', requestId: subject.requestId, tenantId: subject.tenantId,
    policy: { id: check.policyId, version: check.version }, direction: subject.direction, texts: subject.texts,
  });
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': subject.requestId };
  if (webhook.secret) {
    let secret: string;
    try {
      secret = resolveSecret(webhook.secret);
    } catch (error) {
      throw new RemoteCheckFailure('secret', `the webhook's secret cannot be read (${(error as Error).message})`);
    }
    headers[WEBHOOK_SIGNATURE_HEADER] = webhookSignature(secret, body, Math.floor(Date.now() / 1000));
  }
  // One connection per check: the connector judges the address each time, and nothing idles between requests.
  const dispatcher = new Agent({
    connect: guardedConnector({ timeoutMs: webhook.timeoutMs, allowPrivateNetwork: webhook.allowPrivateNetwork === true, resolve: options.resolve, onRefused: options.onRefused }),
  });
  try {
    const response = await request(webhook.url, { method: 'POST', headers, body, dispatcher, signal: AbortSignal.timeout(webhook.timeoutMs) });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      await response.body.dump();
      throw new RemoteCheckFailure('status', `the webhook answered HTTP ${response.statusCode}`);
    }
    return verdictOf(await boundedText(response.body));
  } catch (error) {
    if (error instanceof RemoteCheckFailure) throw error;
    throw failureOf(error);
  } finally {
    void dispatcher.close();
  }
}

async function boundedText(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) throw new RemoteCheckFailure('answer', `the webhook's answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function verdictOf(text: string): RemoteVerdict {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new RemoteCheckFailure('answer', 'the webhook did not answer JSON');
  }
  const action = (answer as { action?: unknown } | null)?.action;
  if (action !== 'allow' && action !== 'block') throw new RemoteCheckFailure('answer', 'the webhook answered no action (expected "allow" or "block")');
  const reason = (answer as { reason?: unknown }).reason;
  if (action === 'allow' || typeof reason !== 'string') return { action };
  const printable = reason.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, MAX_REASON_LENGTH);
  return printable ? { action, reason: printable } : { action };
}

function failureOf(error: unknown): RemoteCheckFailure {
  // Walked as plain objects: the abort's TimeoutError is a DOMException, which may come from another realm than Error.
  for (let cause: unknown = error; typeof cause === 'object' && cause !== null; cause = (cause as { cause?: unknown }).cause) {
    if (cause instanceof OutboundPolicyViolation) return new RemoteCheckFailure('refused', 'the outbound address policy refused the webhook\'s address');
    const { name, code } = cause as { name?: unknown; code?: unknown };
    if (name === 'TimeoutError' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new RemoteCheckFailure('timeout', 'the webhook did not answer in time');
    }
  }
  return new RemoteCheckFailure('connection', 'the webhook could not be reached');
}
