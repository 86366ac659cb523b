import { outboundUrlProblem } from '../../catalog/index.js';

/**
 * A budget webhook is an outbound call the gateway makes on an operator's say-so, like a provider call,
 * so its URL passes the same outbound address policy (SSRF defence): never a cloud metadata or reserved
 * address, loopback / private / link-local only with `allowPrivateNetwork: true` on the webhook. Judged
 * here on the configured host, and again at connect time on the resolved address (BudgetAlerts).
 */
export function webhookUrlProblem(raw: string, allowPrivateNetwork: boolean): string | null {
  const problem = outboundUrlProblem(raw, allowPrivateNetwork);
  return problem ? `budget.webhook.url ${problem}` : null;
}
