import { addressRefusal, classifyHost } from '../../catalog/index.js';

/**
 * A budget webhook is an outbound call the gateway makes on an operator's say-so, like a provider call,
 * so its URL passes the same outbound address policy (SSRF defence): never a cloud metadata or reserved
 * address, loopback / private / link-local only with `allowPrivateNetwork: true` on the webhook. Judged
 * here on the configured host, and again at connect time on the resolved address (BudgetAlerts).
 */
export function webhookUrlProblem(raw: string, allowPrivateNetwork: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'budget.webhook.url must be an http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'budget.webhook.url must be an http(s) URL';
  if (url.username || url.password) return 'budget.webhook.url must not embed credentials';
  const refusal = addressRefusal(classifyHost(url.hostname), allowPrivateNetwork);
  // The provider policy's advice names the provider's knob; the webhook has its own.
  return refusal ? `budget.webhook.url points at ${refusal.replace('on the provider', 'on the webhook')}` : null;
}
