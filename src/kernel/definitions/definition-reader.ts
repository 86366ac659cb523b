/** A mapping of a definition, as YAML or JSON parses it. */
export type DefinitionNode = Record<string, unknown>;

/** One problem of a definition: where (`tenants[0].budget.softPct`, or `budget.softPct` in a request body) and what. */
export interface DefinitionProblem {
  path: string;
  message: string;
}

export function isDefinitionNode(value: unknown): value is DefinitionNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** A secret reference as both the file and the admin API accept it: the secret itself never is. */
export const SECRET_REFERENCE_SHAPE = /^(env|file):.+/;

/** Ids of tenants, keys, providers and deployments. */
export const DEFINITION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Reads the values of a definition (the configuration file, or an admin request body in the file's
 * shape) and collects every problem with its path, so one answer shows them all. The rules are the
 * configuration file's (DESIGN §8); the file's validator and the admin API both read through this class,
 * so a value one accepts the other accepts, with the same words when it is refused. Each reader returns
 * a usable value after a problem so reading can go on.
 */
export class DefinitionReader {
  private readonly found: DefinitionProblem[] = [];

  get problems(): readonly DefinitionProblem[] {
    return this.found;
  }

  problem(path: string, message: string): void {
    this.found.push({ path: path.replace(/^\./, ''), message });
  }

  /** Flags keys the schema does not know: a typo must not silently do nothing. */
  known(node: DefinitionNode, path: string, keys: readonly string[]): Record<string, never> {
    for (const key of Object.keys(node)) if (!keys.includes(key)) this.problem(`${path}.${key}`, `unknown field (expected one of ${keys.join(', ')})`);
    return {};
  }

  list(node: DefinitionNode, key: string, parent = ''): Array<[DefinitionNode, string]> {
    const value = node[key];
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) {
      this.problem(`${parent}.${key}`, 'must be a list');
      return [];
    }
    return value.flatMap((item, index): Array<[DefinitionNode, string]> => {
      const path = `${parent}.${key}[${index}]`.replace(/^\./, '');
      if (!isDefinitionNode(item)) {
        this.problem(path, 'must be a mapping');
        return [];
      }
      return [[item, path]];
    });
  }

  id(node: DefinitionNode, path: string): string {
    const value = this.string(node, path, 'id');
    if (value && !DEFINITION_ID.test(value)) this.problem(`${path}.id`, 'use letters, digits, ".", "_" and "-" (at most 64)');
    return value;
  }

  string(node: DefinitionNode, path: string, key: string): string {
    const value = node[key];
    if (typeof value !== 'string' || value.length === 0) {
      this.problem(`${path}.${key}`, 'is required and must be a string');
      return '';
    }
    return value;
  }

  optionalString(node: DefinitionNode, path: string, key: string): string | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') {
      this.problem(`${path}.${key}`, 'must be a string');
      return null;
    }
    return value;
  }

  /** A secret reference (`env:NAME`, `file:PATH`); `what` ends the message ("the key", "the secret"). */
  secretReference(node: DefinitionNode, path: string, key: string, what: string): string {
    const value = this.string(node, path, key);
    if (value && !SECRET_REFERENCE_SHAPE.test(value)) this.problem(`${path}.${key}`, `must be a secret reference (env:NAME or file:PATH), never ${what} itself`);
    return value;
  }

  optionalBoolean(node: DefinitionNode, path: string, key: string): boolean | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'boolean') {
      this.problem(`${path}.${key}`, 'must be true or false');
      return null;
    }
    return value;
  }

  integer(node: DefinitionNode, path: string, key: string, fallback: number): number {
    return this.optionalInteger(node, path, key) ?? fallback;
  }

  optionalInteger(node: DefinitionNode, path: string, key: string): number | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      this.problem(`${path}.${key}`, 'must be a non-negative integer');
      return null;
    }
    return value;
  }

  /** A limit: absent or null = unlimited; otherwise at least 1 (a limit of 0 would refuse everything silently). */
  positiveInteger(node: DefinitionNode, path: string, key: string): number | null {
    const value = this.optionalInteger(node, path, key);
    if (value === 0) {
      this.problem(`${path}.${key}`, 'must be a positive integer (leave it out for no limit)');
      return null;
    }
    return value;
  }

  number(node: DefinitionNode, path: string, key: string, fallback: number): number {
    const value = node[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      this.problem(`${path}.${key}`, 'must be a non-negative number');
      return fallback;
    }
    return value;
  }

  /** Decimal amounts: quoted strings preferred; plain numbers are taken by their shortest decimal form. */
  decimal(node: DefinitionNode, path: string, key: string, required: boolean): string | null {
    const value = node[key];
    if (value === undefined || value === null) {
      if (required) this.problem(`${path}.${key}`, 'is required (a decimal such as "0.15")');
      return null;
    }
    const text = typeof value === 'number' ? String(value) : value;
    if (typeof text !== 'string' || !/^\d+(\.\d+)?$/.test(text)) {
      this.problem(`${path}.${key}`, 'must be a non-negative decimal such as "0.15"');
      return null;
    }
    return text;
  }

  timestamp(node: DefinitionNode, path: string, key: string): string | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
    if (!date || Number.isNaN(date.getTime())) {
      this.problem(`${path}.${key}`, 'must be an ISO-8601 timestamp');
      return null;
    }
    return date.toISOString();
  }

  stringList(node: DefinitionNode, path: string, key: string): string[] | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      this.problem(`${path}.${key}`, 'must be a list of strings');
      return null;
    }
    return value as string[];
  }

  /** A list of strings, each one of `allowed`; a stranger is named by its index. */
  choiceList<T extends string>(node: DefinitionNode, path: string, key: string, allowed: readonly T[], what: string): T[] | null {
    const values = this.stringList(node, path, key);
    if (values === null) return null;
    for (const [i, value] of values.entries()) {
      if (!(allowed as readonly string[]).includes(value)) this.problem(`${path}.${key}[${i}]`, `unknown ${what} '${value}' (known: ${allowed.join(', ')})`);
    }
    return values as T[];
  }

  oneOf<T extends string>(node: DefinitionNode, path: string, key: string, allowed: readonly T[], fallback: T | null): T {
    const value = node[key];
    if ((value === undefined || value === null) && fallback !== null) return fallback;
    if (typeof value !== 'string' || !allowed.includes(value as T)) {
      this.problem(`${path}.${key}`, `must be one of ${allowed.join(', ')}`);
      return (fallback ?? allowed[0]) as T;
    }
    return value as T;
  }

  /** A nested mapping, or null when absent; anything else is a problem. */
  mapping(node: DefinitionNode, path: string, key: string, shape = 'a mapping'): DefinitionNode | null {
    const value = node[key];
    if (value === undefined || value === null) return null;
    if (!isDefinitionNode(value)) {
      this.problem(`${path}.${key}`, `must be ${shape}`);
      return null;
    }
    return value;
  }
}
