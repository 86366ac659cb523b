import { ROUTING_STRATEGIES } from '../../events/alias-events.js';
import { KEY_SCOPES } from '../../events/api-key-events.js';
import { CAPABILITIES } from '../../events/deployment-events.js';
import { PROVIDER_TYPES } from '../../events/provider-events.js';
import { BUDGET_DEFAULTS, DEFAULT_KEY_SCOPES } from '../../modules/access/index.js';
import { ALIAS_DEFAULTS } from '../../modules/catalog/index.js';
import { inlineCode } from '../kernel/setting-declaration.js';

/**
 * The configuration file's schema (DESIGN §8): every field, its type, whether it is required, its default
 * and its meaning, nested as in the YAML. The validator (gateway-config.ts) takes each mapping's field
 * list from here, so the unknown-field errors and the reference (docs/reference/configuration.md) list the
 * same fields; test/unit/reference-docs.test.ts checks that required fields are the ones the validator
 * asks for.
 */
export interface ConfigField {
  /** What a value looks like, as the validator accepts it. */
  readonly type: string;
  /** A problem is reported when it is missing. */
  readonly required?: boolean;
  /** What applies when it is left out. */
  readonly default?: string;
  readonly meaning: string;
  /** A mapping, or a list of mappings: the fields of that mapping (of each item). */
  readonly fields?: ConfigFields;
  /** A list of such mappings rather than one (`routes`, the five top-level lists). */
  readonly list?: boolean;
}

/** The fields of one mapping, in the order the validator's errors list them. */
export type ConfigFields = Readonly<Record<string, ConfigField>>;

/** The names a mapping accepts: anything else is an `unknown field`. */
export function fieldNames(fields: ConfigFields): string[] {
  return Object.keys(fields);
}

/** A deployment's values when the file leaves them out. */
export const DEPLOYMENT_DEFAULTS = {
  capabilities: ['chat', 'streaming'],
  contextWindow: 128_000,
  maxOutputTokens: 4096,
} as const;

const choices = (values: readonly string[]) => values.map(inlineCode).join(' | ');
const list = (values: readonly string[]) => `\`[${values.join(', ')}]\``;
const ID = 'id: letters, digits, `.`, `_`, `-` (at most 64), starting with a letter or digit';
const SECRET_REFERENCE = 'secret reference: `env:NAME` or `file:PATH`';
const DECIMAL = 'decimal string, e.g. `"0.15"`';
const LIMIT = 'integer ≥ 1';

/** Per-minute rates and concurrency of a key, a tenant or a deployment; absent (or null) = unlimited. */
export const LIMITS_FIELDS: ConfigFields = {
  rpm: { type: LIMIT, default: 'unlimited', meaning: 'requests per minute (a sliding window of one minute in one-second slots)' },
  tpm: { type: LIMIT, default: 'unlimited', meaning: 'tokens per minute, input + output (output estimated at admission, settled with actual usage)' },
  inputTpm: { type: LIMIT, default: 'unlimited', meaning: 'input tokens per minute' },
  outputTpm: { type: LIMIT, default: 'unlimited', meaning: 'output tokens per minute' },
  maxConcurrency: { type: LIMIT, default: 'unlimited', meaning: 'requests in flight at once (on every node with REDIS_URL); over it: 429 `rate_limited` with the exhausted scope' },
};

/** The same members on an alias's policy: the alias as a whole, over every caller. */
export const ALIAS_LIMITS_FIELDS: ConfigFields = Object.fromEntries(
  Object.entries(LIMITS_FIELDS).map(([name, field]) => [name, { ...field, meaning: `${field.meaning}; of the alias over every caller` }]),
);

export const WEBHOOK_FIELDS: ConfigFields = {
  url: { type: 'http(s) URL', required: true, meaning: 'POSTed when a threshold is crossed, signed `x-switchyard-signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`; retried with backoff (4 attempts)' },
  secret: { type: SECRET_REFERENCE, required: true, meaning: 'the HMAC key of the signature' },
  allowPrivateNetwork: { type: 'boolean', default: '`false`', meaning: 'allow a loopback, private or link-local address (cloud metadata and reserved addresses are always refused)' },
};

/** A tenant's or a key's budget: at least one amount; UTC calendar periods. */
export const BUDGET_FIELDS: ConfigFields = {
  monthlyUsd: { type: `${DECIMAL}, above zero`, meaning: 'spend allowed per calendar month (UTC); `monthlyUsd` or `dailyUsd` (or both) is required' },
  dailyUsd: { type: `${DECIMAL}, above zero`, meaning: 'spend allowed per day (UTC)' },
  softPct: { type: 'integer from 1 to 100', default: inlineCode(BUDGET_DEFAULTS.softPct), meaning: 'a threshold (besides 100%) whose crossing appends `BudgetThresholdCrossed` once per period and calls the webhook' },
  enforcement: { type: choices(['hard', 'soft']), default: inlineCode(BUDGET_DEFAULTS.enforcement), meaning: '`hard`: over budget → 402 `budget_exceeded`; `soft`: never refuses, only alerts' },
  webhook: { type: 'mapping', meaning: 'where threshold alerts are sent', fields: WEBHOOK_FIELDS },
};

export const PROVIDER_FIELDS: ConfigFields = {
  id: { type: ID, required: true, meaning: "the provider's name, which deployments refer to" },
  type: { type: choices(PROVIDER_TYPES), required: true, meaning: 'the wire format and authentication it speaks (`openai-compatible`: vLLM, Ollama, TGI; `mock`: the in-process mock)' },
  baseUrl: {
    type: 'URL',
    default: "`openai`, `anthropic`, `gemini`: the public API; `bedrock`: the region's runtime endpoint; `mock`: the gateway's own loopback mock",
    meaning: 'where requests go; required for `openai-compatible` and `azure-openai`; validated against the outbound address policy',
  },
  apiKey: { type: SECRET_REFERENCE, meaning: "the provider credential (Bedrock: `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`); never a literal" },
  apiVersion: { type: 'string', meaning: '`azure-openai`: required; `anthropic`: the `anthropic-version` (default `2023-06-01`); `gemini`: `v1beta` or `v1`' },
  region: { type: 'string', meaning: '`bedrock`: required (the AWS region)' },
  allowPrivateNetwork: { type: 'boolean', default: '`false`', meaning: 'allow a loopback or private-network `baseUrl` (a local vLLM, Ollama on `localhost:11434`)' },
};

export const PRICE_FIELDS: ConfigFields = {
  inputPer1M: { type: DECIMAL, required: true, meaning: 'USD per million input tokens' },
  outputPer1M: { type: DECIMAL, required: true, meaning: 'USD per million output tokens' },
  cachedInputPer1M: { type: DECIMAL, default: 'the input price', meaning: 'USD per million cached input tokens' },
  cacheWritePer1M: { type: DECIMAL, default: 'the input price', meaning: 'USD per million tokens written to the prompt cache' },
  reasoningPer1M: { type: DECIMAL, default: 'the output price', meaning: 'USD per million reasoning tokens' },
  effectiveFrom: { type: 'ISO-8601 timestamp', default: 'the time of `apply`', meaning: 'when this price takes effect; never in the past (prices are effective-dated, history is never rewritten)' },
  currency: { type: '`USD`', default: '`USD`', meaning: 'accepted for readability; every price is in USD' },
};

export const DEPLOYMENT_FIELDS: ConfigFields = {
  id: { type: ID, required: true, meaning: "the deployment's name, which alias routes refer to (never shown to clients)" },
  provider: { type: 'provider id', required: true, meaning: 'a provider declared in the same file' },
  model: { type: 'string', required: true, meaning: "the provider's model name (`azure-openai`: the Azure deployment name)" },
  region: { type: 'string', meaning: "where it runs; an alias's `policy.regions` keeps requests inside a data boundary" },
  capabilities: { type: `list of ${choices(CAPABILITIES)}`, default: list(DEPLOYMENT_DEFAULTS.capabilities), meaning: 'what it can do; requests needing a capability only go to routes that have it' },
  contextWindow: { type: 'integer ≥ 0 (tokens)', default: inlineCode(DEPLOYMENT_DEFAULTS.contextWindow), meaning: 'the largest prompt plus answer' },
  maxOutputTokens: { type: 'integer ≥ 0 (tokens)', default: inlineCode(DEPLOYMENT_DEFAULTS.maxOutputTokens), meaning: 'the largest answer' },
  quotaGroup: { type: 'string', default: 'the deployment alone', meaning: "deployments sharing a group share one provider quota counter (`limits`)" },
  limits: { type: 'mapping', default: 'unlimited', meaning: "the provider's quota for this deployment, counted per quota group; a group with no room makes the route ineligible", fields: LIMITS_FIELDS },
  price: { type: 'mapping', required: true, meaning: 'what a token costs (`inputPer1M` and `outputPer1M` at least)', fields: PRICE_FIELDS },
  disabled: { type: 'boolean', default: '`false`', meaning: '`true` disables the deployment (routes skip it); removing it enables a deployment the file disabled' },
};

export const ROUTE_FIELDS: ConfigFields = {
  deployment: { type: 'deployment id', required: true, meaning: 'a deployment declared in the same file' },
  priority: { type: 'integer ≥ 0', default: inlineCode(ALIAS_DEFAULTS.routePriority), meaning: 'lower is tried first; routes of equal priority share traffic by weight' },
  weight: { type: 'number ≥ 0', default: inlineCode(ALIAS_DEFAULTS.routeWeight), meaning: 'share of traffic within a priority group (`weighted`: over all routes)' },
};

export const CANARY_FIELDS: ConfigFields = {
  deployment: { type: 'deployment id', required: true, meaning: "one of the alias's routes, tried first by the canary's share" },
  percent: { type: 'number from 0 to 100', required: true, meaning: 'share of sessions (or of requests without a session) in the canary' },
  salt: { type: 'string', default: '`""`', meaning: 'part of the stable hash that assigns sessions; changing it reshuffles who is in the canary' },
};

export const POLICY_FIELDS: ConfigFields = {
  requiredCapabilities: { type: 'list of capabilities', default: '`[]`', meaning: 'capabilities every route must have (publication is refused otherwise)' },
  maxAttempts: { type: 'integer ≥ 0', default: 'SWITCHYARD_MAX_ATTEMPTS', meaning: 'upstream calls per request, retries and fallbacks together' },
  ttftTimeoutMs: { type: 'integer ≥ 0 (ms)', default: 'SWITCHYARD_TTFT_TIMEOUT_MS', meaning: 'streams: time to the first token before the attempt is abandoned' },
  regions: { type: 'list of strings', default: '`[]` (any)', meaning: "allowed deployment regions (a data boundary)" },
  canary: { type: 'mapping', default: 'no canary', meaning: 'sends a stable share of traffic to one route first', fields: CANARY_FIELDS },
  limits: { type: 'mapping', default: 'none', meaning: 'rate and concurrency limits of the alias as a whole', fields: ALIAS_LIMITS_FIELDS },
  budgetDowngrade: { type: 'alias name', default: 'refuse with 402', meaning: 'an alias declared in the same file that serves a request a hard budget would refuse (its cost still counts)' },
  cache: { type: 'boolean', default: '`true`', meaning: '`false`: the exact cache never serves this alias' },
};

export const ALIAS_FIELDS: ConfigFields = {
  name: { type: 'string', required: true, meaning: 'the public model name clients send as `model`' },
  strategy: {
    type: choices(ROUTING_STRATEGIES), default: inlineCode(ALIAS_DEFAULTS.strategy),
    meaning: "`priority`: lowest healthy group first, weights within; `weighted`; `least-latency` (EWMA); `least-cost` (price × estimated tokens); `sticky` (a caller's `x-session-id` stays on one route)",
  },
  routes: { type: 'list of mappings, at least one', list: true, required: true, meaning: 'the deployments that serve the alias', fields: ROUTE_FIELDS },
  policy: { type: 'mapping', meaning: 'how requests to the alias are served', fields: POLICY_FIELDS },
  visibility: { type: choices(['public', 'private']), default: inlineCode(ALIAS_DEFAULTS.visibility), meaning: '`private`: not listed by `GET /v1/models`, and callable only by keys that name it in their `aliases`' },
};

export const TENANT_FIELDS: ConfigFields = {
  id: { type: ID, required: true, meaning: "the tenant's id, which keys refer to" },
  name: { type: 'string', default: 'the id', meaning: 'a display name' },
  limits: { type: 'mapping', default: 'unlimited', meaning: "the tenant's limits over all its keys", fields: LIMITS_FIELDS },
  budget: { type: 'mapping', default: 'no budget', meaning: "the tenant's budget over all its keys", fields: BUDGET_FIELDS },
};

export const API_KEY_FIELDS: ConfigFields = {
  id: { type: ID, required: true, meaning: "the key's id (in logs, the ledger and the admin API; never the secret)" },
  tenant: { type: 'tenant id', required: true, meaning: 'a tenant declared in the same file; a key never moves to another tenant' },
  key: {
    type: `${SECRET_REFERENCE}, or \`sha256:HEX\``, required: true,
    meaning: 'the plaintext key (`sk-sy-` + 32 base62 characters), read once and stored as a SHA-256 hash; or that hash itself as `sha256:` + 64 hex digits ' +
      '(what `switchyard config export` writes: the gateway never keeps the plaintext); a different secret later is refused (rotate with `switchyard keys rotate`)',
  },
  aliases: { type: 'list of alias names', default: '`[]` (every public alias)', meaning: 'the aliases the key may call' },
  scopes: { type: `list of ${choices(KEY_SCOPES)}`, default: list(DEFAULT_KEY_SCOPES), meaning: 'what the key may do (write `"admin:platform"` in quotes in YAML flow lists)' },
  limits: { type: 'mapping', default: 'unlimited', meaning: "the key's own limits", fields: LIMITS_FIELDS },
  expiresAt: { type: 'ISO-8601 timestamp', default: 'never', meaning: 'when the key stops working' },
  budget: { type: 'mapping', default: 'no budget', meaning: "the key's own budget", fields: BUDGET_FIELDS },
};

/** The top level: five lists, each optional (an empty file is a valid, empty configuration). */
export const GATEWAY_CONFIG_FIELDS: ConfigFields = {
  providers: { type: 'list of mappings', list: true, default: '`[]`', meaning: 'where requests go: one per provider account and endpoint', fields: PROVIDER_FIELDS },
  deployments: { type: 'list of mappings', list: true, default: '`[]`', meaning: 'a model at a provider, with its capabilities, limits and price', fields: DEPLOYMENT_FIELDS },
  aliases: { type: 'list of mappings', list: true, default: '`[]`', meaning: 'the public model names and how each routes to deployments', fields: ALIAS_FIELDS },
  tenants: { type: 'list of mappings', list: true, default: '`[]`', meaning: 'who is billed and limited', fields: TENANT_FIELDS },
  apiKeys: { type: 'list of mappings', list: true, default: '`[]`', meaning: "gateway keys, each of one tenant", fields: API_KEY_FIELDS },
};
