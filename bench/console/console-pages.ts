/**
 * What the console's pages ask the admin API, at scale: every list and page, each filter of request search,
 * a deep page, one request's story, the event browser and its filters, audit, analytics, access and
 * catalog lists. `setup` answers give the later paths their ids and tokens.
 */
export interface PageCall {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** Why this call is reported but not held to the 1 s bound (an action, not a page; a fallback the console does not use at this size). */
  unbounded?: string;
}

export interface PageFacts {
  tenant: string;
  key: string;
  alias: string;
  deployment: string;
  /** A request with three attempts, for its story. */
  request: string;
  /** A global position deep in the log (90 %). */
  deepPosition: number;
  /** A page token 100 pages of 200 into request search (20,000 requests back). */
  deepRequestToken: string;
  /** A UTC day two weeks back, for time ranges. */
  day: { from: string; to: string };
  /** The 30 days up to tomorrow's UTC midnight. */
  month: { from: string; to: string };
}

export function consolePages(facts: PageFacts): PageCall[] {
  const get = (name: string, path: string): PageCall => ({ name, method: 'GET', path });
  const range = `from=${encodeURIComponent(facts.day.from)}&to=${encodeURIComponent(facts.day.to)}`;
  return [
    get('overview (60 s window)', '/admin/v1/overview'),
    get('overview (900 s window)', '/admin/v1/overview?window=900'),
    get('requests: newest page', '/admin/v1/requests'),
    get('requests: tenant', `/admin/v1/requests?tenant=${facts.tenant}`),
    get('requests: key', `/admin/v1/requests?key=${facts.key}`),
    get('requests: alias', `/admin/v1/requests?alias=${facts.alias}`),
    get('requests: status=failed', '/admin/v1/requests?status=failed'),
    get('requests: status=cancelled (rare)', '/admin/v1/requests?status=cancelled'),
    get('requests: one day', `/admin/v1/requests?${range}`),
    get('requests: tenant+alias+status', `/admin/v1/requests?tenant=${facts.tenant}&alias=${facts.alias}&status=success`),
    get('requests: key+status=rejected (sparse)', `/admin/v1/requests?key=${facts.key}&status=rejected`),
    get('requests: page 101 (limit 200)', `/admin/v1/requests?limit=200&pageToken=${facts.deepRequestToken}`),
    get('request story (3 attempts)', `/admin/v1/requests/${facts.request}`),
    get('events: first page', '/admin/v1/events?limit=100'),
    get('events: deep page', `/admin/v1/events?limit=100&after=${facts.deepPosition}`),
    get('events: type=BreakerOpened', '/admin/v1/events?limit=100&type=BreakerOpened'),
    get('events: type=TenantBudgetSet (sparse)', '/admin/v1/events?limit=100&type=TenantBudgetSet'),
    get('events: one request stream', `/admin/v1/events?stream=request-${facts.request}`),
    get('events: one key stream', `/admin/v1/events?limit=100&stream=apikey-${facts.key}`),
    get('audit: control-plane changes', '/admin/v1/audit?limit=100'),
    get('audit: changes by actor', '/admin/v1/audit?limit=100&actor=admin%3Aops'),
    get('audit: latest checkpoint', '/admin/v1/audit/checkpoint'),
    get('analytics: spend by day (30 d)', `/admin/v1/analytics/spend?granularity=day&from=${encodeURIComponent(facts.month.from)}&to=${encodeURIComponent(facts.month.to)}`),
    get('analytics: spend by alias, day (30 d)', `/admin/v1/analytics/spend?granularity=day&groupBy=alias&from=${encodeURIComponent(facts.month.from)}&to=${encodeURIComponent(facts.month.to)}`),
    get('analytics: spend by tenant, day', `/admin/v1/analytics/spend?groupBy=tenant&${range}`),
    get('analytics: ledger usage (30 d)', `/admin/v1/analytics/ledger-usage?providerType=openai&from=${facts.month.from.slice(0, 10)}&to=${facts.month.to.slice(0, 10)}`),
    get('tenants', '/admin/v1/tenants'),
    get('tenants: a page of 50 (what the console reads)', '/admin/v1/tenants?limit=50'),
    get('tenant', `/admin/v1/tenants/${facts.tenant}`),
    get('tenant spend by day', `/admin/v1/tenants/${facts.tenant}/spend?period=day`),
    get('keys', '/admin/v1/keys'),
    get('keys: a page of 50 (what the console reads)', '/admin/v1/keys?limit=50'),
    // The token a page ending at the sample key would carry (list-page.ts): a page from the middle of the list.
    get('keys: the page of 50 after a key', `/admin/v1/keys?limit=50&pageToken=${Buffer.from(facts.key, 'utf8').toString('base64url')}`),
    get('keys of a tenant', `/admin/v1/keys?tenant=${facts.tenant}`),
    get('key', `/admin/v1/keys/${facts.key}`),
    get('providers', '/admin/v1/providers'),
    get('deployments', '/admin/v1/deployments'),
    get('price history', `/admin/v1/deployments/${facts.deployment}/prices`),
    get('aliases (routes, weights)', '/admin/v1/aliases'),
    get('projections', '/admin/v1/projections'),
    get('status', '/admin/v1/status'),
    { ...get('analytics: spend by day (30 d), PostgreSQL', `/admin/v1/analytics/spend?granularity=day&source=postgres&from=${encodeURIComponent(facts.month.from)}&to=${encodeURIComponent(facts.month.to)}`), unbounded: 'fallback' },
    { ...get('analytics: spend by alias, day (30 d), PostgreSQL', `/admin/v1/analytics/spend?granularity=day&groupBy=alias&source=postgres&from=${encodeURIComponent(facts.month.from)}&to=${encodeURIComponent(facts.month.to)}`), unbounded: 'fallback' },
    { name: 'audit verify (since the latest checkpoint)', method: 'POST', path: '/admin/v1/audit/verify', body: { since: 'latest-checkpoint' } },
    { name: 'audit verify (whole chain)', method: 'POST', path: '/admin/v1/audit/verify', body: {}, unbounded: 'action' },
  ];
}
