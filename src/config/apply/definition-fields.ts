import { canonicalJson } from '../../kernel/canonical-json.js';

/**
 * A definition (a provider's settings, an alias's definition, a tenant's limits and budget, …) as its
 * fields: the dotted path of every leaf. Mappings are walked into; a list (routes, scopes, capabilities)
 * is one field, since its members have no identity of their own to own separately.
 */
export type DefinitionFields = ReadonlyMap<string, unknown>;

export function fieldsOf(value: unknown, prefix = ''): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  const walk = (node: unknown, path: string) => {
    if (node !== null && typeof node === 'object' && !Array.isArray(node) && !(node instanceof Date)) {
      // An empty mapping has no fields: like a member left out, it sets nothing (`limits: {}` is no limits).
      for (const [name, member] of Object.entries(node as Record<string, unknown>)) {
        if (member !== undefined) walk(member, path ? `${path}.${name}` : name);
      }
      return;
    }
    if (path) fields.set(path, node);
  };
  walk(value, prefix);
  return fields;
}

/**
 * Two values of one field are the same when their JSON is: left out and null are the same (optional
 * members are left out when unset so that older events compare equal with newer files).
 */
export function sameField(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

/** The fields whose values differ between two definitions, in a stable order. */
export function changedFields(before: DefinitionFields, after: DefinitionFields): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => !sameField(before.get(name), after.get(name))).sort();
}

/**
 * The definition back from its fields. A parent written as null (no budget) gives way to members of it
 * kept from elsewhere; members left out stay out.
 */
export function definitionOf<T>(fields: DefinitionFields): T {
  const root: Record<string, unknown> = {};
  const paths = [...fields.keys()].sort((a, b) => a.split('.').length - b.split('.').length);
  for (const path of paths) {
    const value = fields.get(path);
    if (value === undefined) continue;
    const names = path.split('.');
    let node = root;
    for (const name of names.slice(0, -1)) {
      const next = node[name];
      if (next === null || next === undefined || typeof next !== 'object' || Array.isArray(next)) node[name] = {};
      node = node[name] as Record<string, unknown>;
    }
    const last = names.at(-1)!;
    // A member already holds a mapping built from deeper fields: a null parent does not erase it.
    if (value === null && node[last] !== null && typeof node[last] === 'object') continue;
    node[last] = value;
  }
  return root as T;
}
