/**
 * JSON Schema (what OpenAI clients send for tool parameters and json_schema output) → the OpenAPI
 * Schema subset Gemini accepts. Gemini rejects the whole request on a keyword it does not know
 * (`additionalProperties`, `$schema`, `$ref`, …), so unknown keywords are stripped, local `$ref`s are
 * inlined, `type: [X, "null"]` becomes `nullable`, `const` becomes a one-value enum and `oneOf` becomes
 * `anyOf`. What cannot be expressed at all (a recursive schema) is refused, never silently reshaped.
 */

export class SchemaNotRepresentable extends Error {
  override readonly name = 'SchemaNotRepresentable';
}

type Json = Record<string, unknown>;

/** Keywords Gemini's Schema object knows, copied through after their values are converted. */
const PASSTHROUGH = ['title', 'description', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minProperties', 'maxProperties', 'example', 'default', 'propertyOrdering'];
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
/** Gemini accepts only these formats, per type; others (email, uri, uuid, …) are a 400. */
const FORMATS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['STRING', new Set(['enum', 'date-time'])],
  ['INTEGER', new Set(['int32', 'int64'])],
  ['NUMBER', new Set(['float', 'double'])],
]);
/** Deeper nesting than this is almost certainly a runaway schema; Gemini limits depth too. */
const MAX_DEPTH = 32;
/**
 * Inlining `$ref`s can multiply a small schema (each definition referring twice to the next doubles
 * it): past this many converted nodes the schema is refused instead of built.
 */
const MAX_CONVERTED_NODES = 20_000;

interface Budget {
  left: number;
}

export function toGeminiSchema(schema: Json): Json {
  return convert(schema, schema, [], 0, { left: MAX_CONVERTED_NODES });
}

/** Tool parameters: Gemini rejects an OBJECT with no properties, so a no-argument tool sends none. */
export function toGeminiParameters(schema: Json): Json | undefined {
  const converted = toGeminiSchema(schema);
  if (converted.type === 'OBJECT' && converted.properties === undefined) return undefined;
  return converted;
}

function convert(node: Json, root: Json, refs: string[], depth: number, budget: Budget): Json {
  if (depth > MAX_DEPTH) throw new SchemaNotRepresentable(`schema nests deeper than ${MAX_DEPTH} levels`);
  if (--budget.left < 0) throw new SchemaNotRepresentable(`schema expands to more than ${MAX_CONVERTED_NODES} nodes once its $refs are inlined`);
  if (typeof node.$ref === 'string') {
    const ref = node.$ref;
    if (refs.includes(ref)) throw new SchemaNotRepresentable(`recursive schema (${ref}) cannot be expressed for Gemini`);
    const target = resolveRef(root, ref);
    // Sibling keywords next to $ref (e.g. a description) refine the referenced schema.
    const { $ref: _ignored, ...siblings } = node;
    return convert({ ...target, ...siblings }, root, [...refs, ref], depth + 1, budget);
  }
  if (Array.isArray(node.allOf) && node.allOf.length === 1 && isObject(node.allOf[0])) {
    const { allOf, ...rest } = node;
    return convert({ ...(allOf as Json[])[0], ...rest }, root, refs, depth + 1, budget);
  }

  const out: Json = {};
  let nullable = node.nullable === true;
  const types = (Array.isArray(node.type) ? node.type : node.type !== undefined ? [node.type] : []).filter(
    (t): t is string => typeof t === 'string' && TYPES.has(t),
  );
  if (types.includes('null')) nullable = true;
  const concrete = types.filter((t) => t !== 'null');

  const alternatives = (Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : null) as unknown[] | null;
  if (concrete.length > 1) {
    // ["string", "integer"] has no single Gemini type: express it as alternatives.
    out.anyOf = concrete.map((t) => {
      // The node as one type without its alternatives. Its keys are the client's (no Object.assign): the
      // overridden keys lead the copy and are set again over the node's own (convert reads keys by name).
      const single: Json = { type: t, anyOf: undefined, oneOf: undefined, nullable: undefined, ...node };
      single.type = t;
      single.anyOf = undefined;
      single.oneOf = undefined;
      single.nullable = undefined;
      return convert(single, root, refs, depth + 1, budget);
    });
  } else if (alternatives) {
    const branches = alternatives.filter(isObject).filter((branch) => !(branch.type === 'null' && Object.keys(branch).length === 1));
    if (branches.length < alternatives.length) nullable = true;
    if (branches.length === 1) Object.assign(out, convert(branches[0], root, refs, depth + 1, budget));
    else out.anyOf = branches.map((branch) => convert(branch, root, refs, depth + 1, budget));
  }
  if (concrete.length === 1) out.type = concrete[0].toUpperCase();
  else if (concrete.length === 0 && types.includes('null') && !out.anyOf && out.type === undefined) out.type = 'NULL';

  for (const key of PASSTHROUGH) if (node[key] !== undefined) out[key] = node[key];

  const values = node.const !== undefined ? [node.const] : Array.isArray(node.enum) ? node.enum : null;
  if (values && values.length > 0 && values.every((v) => typeof v === 'string')) {
    out.enum = values;
    out.type ??= 'STRING';
  }
  if (typeof node.format === 'string' && typeof out.type === 'string' && FORMATS.get(out.type)?.has(node.format)) out.format = node.format;

  if (isObject(node.properties)) {
    // Built as own data properties, whatever the names: a property named like an Object.prototype member
    // is an ordinary property of the schema.
    const properties: Json = Object.fromEntries(
      Object.entries(node.properties).filter((entry): entry is [string, Json] => isObject(entry[1])).map(([name, child]) => [name, convert(child, root, refs, depth + 1, budget)]),
    );
    if (Object.keys(properties).length > 0) {
      out.properties = properties;
      out.type ??= 'OBJECT';
      if (Array.isArray(node.required)) {
        const required = node.required.filter((name): name is string => typeof name === 'string' && Object.hasOwn(properties, name));
        if (required.length) out.required = required;
      }
    }
  }
  if (isObject(node.items)) {
    out.items = convert(node.items, root, refs, depth + 1, budget);
    out.type ??= 'ARRAY';
  }
  if (nullable) out.nullable = true;
  return out;
}

function resolveRef(root: Json, ref: string): Json {
  if (!ref.startsWith('#')) throw new SchemaNotRepresentable(`only local $ref is supported (${ref})`);
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
  }
  if (!isObject(node)) throw new SchemaNotRepresentable(`$ref ${ref} does not resolve`);
  return node;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
