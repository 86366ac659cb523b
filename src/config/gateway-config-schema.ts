import { ROUTING_STRATEGIES } from '../../events/alias-events.js';
import { CAPABILITIES } from '../../events/deployment-events.js';
import { PROVIDER_TYPES } from '../../events/provider-events.js';
import { API_KEY_FIELDS, CONTENT_POLICY_FIELDS, TENANT_FIELDS } from '../../modules/access/index.js';
import { ALIAS_LIMITS_FIELDS, LIMITS_FIELDS } from '../../modules/admin/index.js';
import { ALIAS_DEFAULTS } from '../../modules/catalog/index.js';
import { type ConfigFields, FIELD_TYPES, fieldChoices, fieldList, inlineCode } from '../kernel/index.js';

/**
 * The configuration file's schema (DESIGN §8): every field, its type, whether it is required, its default
 * and its meaning, nested as in the YAML. The validator (gateway-config.ts) takes each mapping's field
 * list from here, so the unknown-field errors and the reference (docs/reference/configuration.md) list the
 * same fields; test/unit/reference-docs.test.ts checks that required fields are the ones the validator
 * asks for. Tenants, keys, budgets and limits are declared with the readers the admin API shares
 * (modules/access, modules/admin) and re-exported here, so the file and the API say the same things.
 */
export { type ConfigField, type ConfigFields, fieldNames } from '../kernel/index.js';
export { API_KEY_FIELDS, BUDGET_FIELDS, CONTENT_POLICY_FIELDS, TENANT_FIELDS, WEBHOOK_FIELDS } from '../../modules/access/index.js';
export { ALIAS_LIMITS_FIELDS, LIMITS_FIELDS } from '../../modules/admin/index.js';

/** A deployment's values when the file leaves them out. */
export const DEPLOYMENT_DEFAULTS = {
  capabilities: ['chat', 'streaming'],
  contextWindow: 128_000,
  maxOutputTokens: 4096,
} as const;

const { id: ID, secretReference: SECRET_REFERENCE, decimal: DECIMAL } = FIELD_TYPES;

export const PROVIDER_FIELDS: ConfigFields = {
  id: { type: ID, required: true, meaning: "the provider's name, which deployments refer to" },
  type: { type: fieldChoices(PROVIDER_TYPES), required: true, meaning: 'the wire format and authentication it speaks (`openai-compatible`: vLLM, Ollama, TGI; `mock`: the in-process mock)' },
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
  capabilities: { type: `list of ${fieldChoices(CAPABILITIES)}`, default: fieldList(DEPLOYMENT_DEFAULTS.capabilities), meaning: 'what it can do; requests needing a capability only go to routes that have it' },
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
    type: fieldChoices(ROUTING_STRATEGIES), default: inlineCode(ALIAS_DEFAULTS.strategy),
    meaning: "`priority`: lowest healthy group first, weights within; `weighted`; `least-latency` (EWMA); `least-cost` (price × estimated tokens); `sticky` (a caller's `x-session-id` stays on one route)",
  },
  routes: { type: 'list of mappings, at least one', list: true, required: true, meaning: 'the deployments that serve the alias', fields: ROUTE_FIELDS },
  policy: { type: 'mapping', meaning: 'how requests to the alias are served', fields: POLICY_FIELDS },
  visibility: { type: fieldChoices(['public', 'private']), default: inlineCode(ALIAS_DEFAULTS.visibility), meaning: '`private`: not listed by `GET /v1/models`, and callable only by keys that name it in their `aliases`' },
  contentPolicy: { type: 'content policy id', default: 'none', meaning: "a content policy applied to every request on the alias (combined with the tenant's and the key's: the strictest action wins)" },
};

/** The top level: six lists, each optional (an empty file is a valid, empty configuration). */
export const GATEWAY_CONFIG_FIELDS: ConfigFields = {
  providers: { type: 'list of mappings', list: true, default: '`[]`', meaning: 'where requests go: one per provider account and endpoint', fields: PROVIDER_FIELDS },
  deployments: { type: 'list of mappings', list: true, default: '`[]`', meaning: 'a model at a provider, with its capabilities, limits and price', fields: DEPLOYMENT_FIELDS },
  aliases: { type: 'list of mappings', list: true, default: '`[]`', meaning: 'the public model names and how each routes to deployments', fields: ALIAS_FIELDS },
  contentPolicies: {
    type: 'list of mappings', list: true, default: '`[]`', meaning: 'what happens to sensitive content in requests and answers (docs/content-safety.md); attached by `contentPolicy`', fields: CONTENT_POLICY_FIELDS,
  },
  tenants: { type: 'list of mappings', list: true, default: '`[]`', meaning: 'who is billed and limited', fields: TENANT_FIELDS },
  apiKeys: { type: 'list of mappings', list: true, default: '`[]`', meaning: "gateway keys, each of one tenant", fields: API_KEY_FIELDS },
};
