/**
 * The configuration setting behind a refusal, as an operator finds it in the configuration file (and
 * its admin-API twin): `tenants[acme].budget.monthlyUsd`, `apiKeys[app].limits.rpm`,
 * `aliases[chat].policy.limits.maxConcurrency`. Every 402 and 429 of the limits names one, so that the
 * operator reading a client's complaint knows what to change.
 */
export type LimitedKind = 'key' | 'tenant' | 'alias' | 'quota_group';

/** The field of a `limits` mapping each rate dimension is set by. */
export const RATE_FIELDS = { requests: 'rpm', tokens: 'tpm', input_tokens: 'inputTpm', output_tokens: 'outputTpm' } as const;

/**
 * `field` of a `limits` mapping (`rpm`, `maxConcurrency` …) of the scope. A deployment quota is set on
 * the deployments, whose ids a client never sees: it is named by the route (`shownAs`) or the group.
 */
export function limitSetting(kind: LimitedKind, id: string, field: string, shownAs?: string): string {
  switch (kind) {
    case 'key':
      return `apiKeys[${id}].limits.${field}`;
    case 'tenant':
      return `tenants[${id}].limits.${field}`;
    case 'alias':
      return `aliases[${id}].policy.limits.${field}`;
    case 'quota_group':
      return shownAs === undefined ? `limits.${field} of the deployments in quota group '${id}'` : `limits.${field} of the deployment behind route '${shownAs}'`;
  }
}

/** `tenants[acme].budget.monthlyUsd`, `apiKeys[app].budget.dailyUsd`. */
export function budgetSetting(kind: 'tenant' | 'key', id: string, period: 'month' | 'day'): string {
  return `${kind === 'tenant' ? 'tenants' : 'apiKeys'}[${id}].budget.${period === 'month' ? 'monthlyUsd' : 'dailyUsd'}`;
}
