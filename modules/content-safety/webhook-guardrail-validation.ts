import type { RemoteCheckDirection, WebhookGuardrail } from '../../events/index.js';
import { SECRET_REFERENCE_SHAPE } from '../../src/kernel/index.js';
import { outboundUrlProblem } from '../catalog/index.js';

/** How long the gateway waits for an operator's webhook by default, and at most: the request waits with it. */
export const WEBHOOK_GUARDRAIL_TIMEOUT = Object.freeze({ defaultMs: 2_000, maxMs: 10_000 });

const WEBHOOK_FIELDS = ['url', 'secret', 'timeoutMs', 'failOpen', 'directions', 'allowPrivateNetwork'];
const DIRECTIONS: readonly RemoteCheckDirection[] = ['input', 'output'];

/**
 * Everything wrong with a policy's `webhook` as declared, each problem prefixed with its path. The URL is an
 * outbound call made on an operator's say-so, like a provider's: it passes the outbound address policy here, on the
 * configured host (never a metadata or reserved address; loopback, private and link-local only with
 * `allowPrivateNetwork: true`), and again at connect time on the resolved address (webhook-guardrail.ts).
 */
export function webhookGuardrailProblems(value: unknown, path: string): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: must be a mapping { url, secret?, timeoutMs?, failOpen?, directions?, allowPrivateNetwork? }`];
  const webhook = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(webhook)) if (!WEBHOOK_FIELDS.includes(key)) problems.push(`${path}.${key}: unknown field (expected one of ${WEBHOOK_FIELDS.join(', ')})`);
  const allowPrivateNetwork = webhook.allowPrivateNetwork;
  if (allowPrivateNetwork !== undefined && typeof allowPrivateNetwork !== 'boolean') problems.push(`${path}.allowPrivateNetwork: must be true or false`);
  const urlProblem = webhookUrlProblem(webhook.url, allowPrivateNetwork === true);
  if (urlProblem) problems.push(`${path}.url: ${urlProblem}`);
  if (webhook.secret !== undefined && (typeof webhook.secret !== 'string' || !SECRET_REFERENCE_SHAPE.test(webhook.secret))) {
    problems.push(`${path}.secret: must be a secret reference (env:NAME or file:PATH), never the secret itself`);
  }
  const timeout = webhook.timeoutMs;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > WEBHOOK_GUARDRAIL_TIMEOUT.maxMs)) {
    problems.push(`${path}.timeoutMs: must be an integer from 1 to ${WEBHOOK_GUARDRAIL_TIMEOUT.maxMs} (milliseconds)`);
  }
  if (webhook.failOpen !== undefined && typeof webhook.failOpen !== 'boolean') problems.push(`${path}.failOpen: must be true or false`);
  const directions = webhook.directions;
  if (directions !== undefined) {
    if (!Array.isArray(directions) || directions.length === 0 || directions.some((d) => !DIRECTIONS.includes(d as RemoteCheckDirection))) {
      problems.push(`${path}.directions: must be a non-empty list of ${DIRECTIONS.join(', ')}`);
    } else if (new Set(directions).size !== directions.length) problems.push(`${path}.directions: a direction is listed twice`);
  }
  return problems;
}

function webhookUrlProblem(raw: unknown, allowPrivateNetwork: boolean): string | null {
  const problem = outboundUrlProblem(raw, allowPrivateNetwork);
  return problem === 'must not embed credentials' ? `${problem} (sign with \`secret\` instead)` : problem;
}

/** A valid `webhook` with its defaults filled and its directions in a stable order. */
export function normalizeWebhookGuardrail(webhook: Record<string, unknown>): WebhookGuardrail {
  const directions = (webhook.directions as RemoteCheckDirection[] | undefined) ?? ['input'];
  return {
    url: webhook.url as string,
    ...(webhook.secret !== undefined ? { secret: webhook.secret as string } : {}),
    timeoutMs: (webhook.timeoutMs as number | undefined) ?? WEBHOOK_GUARDRAIL_TIMEOUT.defaultMs,
    failOpen: (webhook.failOpen as boolean | undefined) ?? false,
    directions: DIRECTIONS.filter((direction) => directions.includes(direction)),
    ...(webhook.allowPrivateNetwork === true ? { allowPrivateNetwork: true } : {}),
  };
}
