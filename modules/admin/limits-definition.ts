import { type AliasRateLimits, NO_LIMITS, type TenantLimits } from '../../events/index.js';
import { type ConfigFields, type DefinitionNode, DefinitionReader, FIELD_TYPES, fieldNames } from '../../src/kernel/index.js';

/** Per-minute rates and concurrency of a key, a tenant or a deployment; absent (or null) = unlimited. */
export const LIMITS_FIELDS: ConfigFields = {
  rpm: { type: FIELD_TYPES.limit, default: 'unlimited', meaning: 'requests per minute (a sliding window of one minute in one-second slots)' },
  tpm: { type: FIELD_TYPES.limit, default: 'unlimited', meaning: 'tokens per minute, input + output (output estimated at admission, settled with actual usage)' },
  inputTpm: { type: FIELD_TYPES.limit, default: 'unlimited', meaning: 'input tokens per minute' },
  outputTpm: { type: FIELD_TYPES.limit, default: 'unlimited', meaning: 'output tokens per minute' },
  maxConcurrency: { type: FIELD_TYPES.limit, default: 'unlimited', meaning: 'requests in flight at once (on every node with REDIS_URL); over it: 429 `rate_limited` with the exhausted scope' },
};

/** The `limits` member of a definition (a tenant's, a key's, a deployment's), in the event form. */
export function readLimits(reader: DefinitionReader, node: DefinitionNode, path: string): TenantLimits {
  const value = reader.mapping(node, path, 'limits');
  return value ? readLimitsMapping(reader, value, `${path}.limits`) : { ...NO_LIMITS };
}

/** A limits mapping itself (the body of `PUT …/limits`): input / output token limits are left out when unset, as apply writes them. */
export function readLimitsMapping(reader: DefinitionReader, value: DefinitionNode, path: string): TenantLimits {
  reader.known(value, path, fieldNames(LIMITS_FIELDS));
  const inputTpm = reader.positiveInteger(value, path, 'inputTpm');
  const outputTpm = reader.positiveInteger(value, path, 'outputTpm');
  return {
    rpm: reader.positiveInteger(value, path, 'rpm'),
    tpm: reader.positiveInteger(value, path, 'tpm'),
    // Left out when unset, so what was issued before these existed compares equal.
    ...(inputTpm !== null ? { inputTpm } : {}),
    ...(outputTpm !== null ? { outputTpm } : {}),
    maxConcurrency: reader.positiveInteger(value, path, 'maxConcurrency'),
  };
}

/** The same members on an alias's policy: the alias as a whole, over every caller. */
export const ALIAS_LIMITS_FIELDS: ConfigFields = Object.fromEntries(
  Object.entries(LIMITS_FIELDS).map(([name, field]) => [name, { ...field, meaning: `${field.meaning}; of the alias over every caller` }]),
);

/** An alias's `policy.limits` mapping: only the members set, null when none is (aliases published before limits existed compare equal). */
export function readAliasLimitsMapping(reader: DefinitionReader, value: DefinitionNode, path: string): AliasRateLimits | null {
  reader.known(value, path, fieldNames(ALIAS_LIMITS_FIELDS));
  const limits: AliasRateLimits = {};
  for (const name of fieldNames(ALIAS_LIMITS_FIELDS) as Array<keyof AliasRateLimits>) {
    const limit = reader.positiveInteger(value, path, name);
    if (limit !== null) limits[name] = limit;
  }
  return Object.keys(limits).length ? limits : null;
}

/** A limits member already validated (`@DefinitionMember(readLimitsMapping)`), or none, in the event form. */
export function limitsOf(value: DefinitionNode | null | undefined): TenantLimits {
  return value ? readLimitsMapping(new DefinitionReader(), value, '') : { ...NO_LIMITS };
}
