import { createHmac } from 'node:crypto';

/** The header every signed outbound webhook carries (budget alerts, webhook guardrails). */
export const WEBHOOK_SIGNATURE_HEADER = 'x-switchyard-signature';

/**
 * The signature of one webhook body, as `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (the Stripe
 * scheme): the receiver recomputes it with the shared secret, and the timestamp lets it refuse old replays.
 */
export function webhookSignature(secret: string, body: string, timestampSeconds: number): string {
  const signature = createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex');
  return `t=${timestampSeconds},v1=${signature}`;
}
