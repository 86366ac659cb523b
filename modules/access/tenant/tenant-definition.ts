import type { BudgetWebhook, TenantBudget, TenantLimits } from '../../../events/index.js';
import { LIMITS_FIELDS, readLimits } from '../../admin/index.js';
import { type ConfigFields, type DefinitionNode, type DefinitionReader, FIELD_TYPES, fieldChoices, fieldNames, inlineCode } from '../../../src/kernel/index.js';
import { BUDGET_DEFAULTS } from './tenant.decider.js';
import { readContentPolicyReference } from '../content-policy/content-policy-reference.js';

/**
 * A tenant as the configuration file declares it and the admin API takes it (`POST /admin/v1/tenants`,
 * `PUT …/budget`): the fields, and the one reader both use, so the two accept the same values and refuse
 * the others in the same words (DESIGN §8).
 */
export const WEBHOOK_FIELDS: ConfigFields = {
  url: { type: 'http(s) URL', required: true, meaning: 'POSTed when a threshold is crossed, signed `x-switchyard-signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`; retried with backoff (4 attempts)' },
  secret: { type: FIELD_TYPES.secretReference, required: true, meaning: 'the HMAC key of the signature' },
  allowPrivateNetwork: { type: 'boolean', default: '`false`', meaning: 'allow a loopback, private or link-local address (cloud metadata and reserved addresses are always refused)' },
};

/** A tenant's or a key's budget: at least one amount; UTC calendar periods. */
export const BUDGET_FIELDS: ConfigFields = {
  monthlyUsd: { type: `${FIELD_TYPES.decimal}, above zero`, meaning: 'spend allowed per calendar month (UTC); `monthlyUsd` or `dailyUsd` (or both) is required' },
  dailyUsd: { type: `${FIELD_TYPES.decimal}, above zero`, meaning: 'spend allowed per day (UTC)' },
  softPct: { type: 'integer from 1 to 100', default: inlineCode(BUDGET_DEFAULTS.softPct), meaning: 'a threshold (besides 100%) whose crossing appends `BudgetThresholdCrossed` once per period and calls the webhook' },
  enforcement: { type: fieldChoices(['hard', 'soft']), default: inlineCode(BUDGET_DEFAULTS.enforcement), meaning: '`hard`: over budget → 402 `budget_exceeded`; `soft`: never refuses, only alerts' },
  webhook: { type: 'mapping', meaning: 'where threshold alerts are sent', fields: WEBHOOK_FIELDS },
};

export const TENANT_FIELDS: ConfigFields = {
  id: { type: FIELD_TYPES.id, required: true, meaning: "the tenant's id, which keys refer to" },
  name: { type: 'string', default: 'the id', meaning: 'a display name' },
  limits: { type: 'mapping', default: 'unlimited', meaning: "the tenant's limits over all its keys", fields: LIMITS_FIELDS },
  budget: { type: 'mapping', default: 'no budget', meaning: "the tenant's budget over all its keys", fields: BUDGET_FIELDS },
  contentPolicy: { type: 'content policy id', default: 'none', meaning: "a content policy applied to every request of the tenant's keys (combined with a key's and an alias's: the strictest action wins)" },
};

/** A tenant's definition in the event form. */
export interface TenantDefinition {
  id: string;
  name: string;
  limits: TenantLimits;
  budget: TenantBudget | null;
  /** The content policy attached to the tenant, or null. */
  contentPolicy: string | null;
}

/** One tenant mapping at `path` (`tenants[0]` in the file, the body's root in the API). */
export function readTenant(reader: DefinitionReader, node: DefinitionNode, path: string): TenantDefinition {
  reader.known(node, path, fieldNames(TENANT_FIELDS));
  const id = reader.id(node, path);
  const budget = readBudget(reader, node, path);
  return {
    id, name: reader.optionalString(node, path, 'name') ?? id, limits: readLimits(reader, node, path), budget,
    contentPolicy: readContentPolicyReference(reader, node, path),
  };
}

/** The `budget` member of a tenant or a key: null when absent. */
export function readBudget(reader: DefinitionReader, node: DefinitionNode, path: string): TenantBudget | null {
  const value = reader.mapping(node, path, 'budget');
  return value ? readBudgetMapping(reader, value, `${path}.budget`) : null;
}

/** `{ monthlyUsd?, dailyUsd?, softPct, enforcement, webhook? }`: a budget mapping itself (the body of `PUT …/budget`). */
export function readBudgetMapping(reader: DefinitionReader, value: DefinitionNode, at: string): TenantBudget {
  reader.known(value, at, fieldNames(BUDGET_FIELDS));
  const monthlyUsd = reader.decimal(value, at, 'monthlyUsd', false);
  const dailyUsd = reader.decimal(value, at, 'dailyUsd', false);
  // Only when neither is written: a bad amount is its own problem, named where it is.
  if ((value.monthlyUsd ?? null) === null && (value.dailyUsd ?? null) === null) reader.problem(at, 'needs monthlyUsd or dailyUsd (or both)');
  for (const [name, amount] of [['monthlyUsd', monthlyUsd], ['dailyUsd', dailyUsd]] as const) {
    if (amount !== null && Number(amount) === 0) reader.problem(`${at}.${name}`, 'must be above zero');
  }
  const softPct = reader.integer(value, at, 'softPct', BUDGET_DEFAULTS.softPct);
  if (softPct < 1 || softPct > 100) reader.problem(`${at}.softPct`, 'must be an integer from 1 to 100');
  const webhook = readWebhook(reader, value, at);
  return {
    // Members that are not set are left out, so budgets set before they existed compare equal.
    ...(monthlyUsd !== null ? { monthlyUsd } : {}),
    ...(dailyUsd !== null ? { dailyUsd } : {}),
    softPct,
    enforcement: reader.oneOf(value, at, 'enforcement', ['hard', 'soft'] as const, BUDGET_DEFAULTS.enforcement),
    ...(webhook ? { webhook } : {}),
  };
}

function readWebhook(reader: DefinitionReader, budget: DefinitionNode, at: string): BudgetWebhook | null {
  const value = reader.mapping(budget, at, 'webhook', 'a mapping with url and secret');
  if (!value) return null;
  const path = `${at}.webhook`;
  reader.known(value, path, fieldNames(WEBHOOK_FIELDS));
  const url = reader.string(value, path, 'url');
  if (url && !/^https?:\/\/[^/]+/.test(url)) reader.problem(`${path}.url`, 'must be an http(s) URL');
  const secret = reader.secretReference(value, path, 'secret', 'the secret');
  const allowPrivateNetwork = reader.optionalBoolean(value, path, 'allowPrivateNetwork') === true;
  return { url, secret, ...(allowPrivateNetwork ? { allowPrivateNetwork } : {}) };
}
