import { inlineCode } from '../setting-declaration.js';

/**
 * One field of a definition as the configuration file writes it (DESIGN §8): its type, whether it is
 * required, its default and its meaning, nested as in the YAML. The file's validator and the admin API
 * read a tenant's or a key's definition through the same field lists, and the reference
 * (docs/reference/configuration.md) is rendered from them, so the three name the same fields.
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

/** The types the schema's fields share, in the reference's words. */
export const FIELD_TYPES = {
  id: 'id: letters, digits, `.`, `_`, `-` (at most 64), starting with a letter or digit',
  secretReference: 'secret reference: `env:NAME` or `file:PATH`',
  decimal: 'decimal string, e.g. `"0.15"`',
  limit: 'integer ≥ 1',
} as const;

/** `a` | `b` | `c`: the values a field accepts. */
export function fieldChoices(values: readonly string[]): string {
  return values.map(inlineCode).join(' | ');
}

/** `[a, b]`: a list default as the YAML writes it. */
export function fieldList(values: readonly string[]): string {
  return `\`[${values.join(', ')}]\``;
}
