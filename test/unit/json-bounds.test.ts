import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { type JsonShape, JSON_LIMITS, assertJsonWithinBounds, findJsonBoundsProblem, jsonTextNestsDeeperThan } from '../../modules/canonical/json-bounds.js';
import { parseJsonBody } from '../../modules/inference/http/json-body-parser.js';

const SHAPE: JsonShape = { pathStyle: 'brackets', freeForm: [['tools', '*', 'function', 'parameters'], ['response_format', 'json_schema', 'schema']] };

/** `{"a":{"a":…{"a":1}}}`, `levels` objects deep, built without recursion. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('client JSON bounds', () => {
  test('a client-defined value may nest 64 levels; one more is refused, naming the value, not the deep node', () => {
    const at = (schema: unknown) => ({ tools: [{ type: 'function', function: { name: 'f', parameters: schema } }] });
    // 64 objects inside one another: the innermost value is 64 levels below the schema.
    expect(findJsonBoundsProblem(at(nested(JSON_LIMITS.valueDepth)), SHAPE)).toBeNull();
    expect(findJsonBoundsProblem(at(nested(JSON_LIMITS.valueDepth + 1)), SHAPE)).toEqual({ kind: 'too_deep', path: 'tools[0].function.parameters', limit: 64 });
    expect(findJsonBoundsProblem({ response_format: { json_schema: { schema: nested(10_000) } } }, SHAPE)).toEqual({
      kind: 'too_deep', path: 'response_format.json_schema.schema', limit: 64,
    });
  });

  test('structured fields nest at most 32 levels, wherever they are', () => {
    expect(findJsonBoundsProblem({ messages: [{ role: 'user', extra: nested(28) }] }, SHAPE)).toBeNull();
    const problem = findJsonBoundsProblem({ messages: [{ role: 'user', extra: nested(40) }] }, SHAPE);
    expect(problem).toMatchObject({ kind: 'too_deep', limit: 32 });
    expect((problem as { path: string }).path).toMatch(/^messages\[0\]\.extra(\.a)+$/);
  });

  test('a million levels are walked without recursion', () => {
    const deep = JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000)) as unknown;
    expect(findJsonBoundsProblem({ response_format: { json_schema: { schema: deep } } }, SHAPE)).toMatchObject({ kind: 'too_deep', path: 'response_format.json_schema.schema' });
    expect(findJsonBoundsProblem(deep, SHAPE)).toMatchObject({ kind: 'too_deep', limit: 32 });
  });

  test('values are counted per client-defined value and for the whole body', () => {
    const wide = (n: number) => ({ type: 'object', enum: Array.from({ length: n }, (_, i) => i) });
    // The value itself, its two members, the array: 3 + n values.
    expect(findJsonBoundsProblem({ tools: [{ function: { parameters: wide(JSON_LIMITS.valueNodes - 4) } }] }, SHAPE)).toBeNull();
    expect(findJsonBoundsProblem({ tools: [{}, { function: { parameters: wide(JSON_LIMITS.valueNodes) } }] }, SHAPE)).toEqual({
      kind: 'too_many_values', path: 'tools[1].function.parameters', limit: 20_000,
    });
    const messages = Array.from({ length: 70_000 }, () => ({ role: 'user', content: 'x' }));
    expect(findJsonBoundsProblem({ messages }, SHAPE)).toEqual({ kind: 'too_many_values', path: null, limit: 200_000 });
  });

  test('keys named like Object.prototype members are refused in structured fields, allowed inside schemas except __proto__', () => {
    for (const key of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf', 'toLocaleString']) {
      expect(findJsonBoundsProblem({ [key]: 1 }, SHAPE)).toEqual({ kind: 'prototype_key', path: key });
      expect(findJsonBoundsProblem({ messages: [{ role: 'user', [key]: null }] }, SHAPE)).toEqual({ kind: 'prototype_key', path: `messages[0].${key}` });
      expect(findJsonBoundsProblem({ tools: [{ function: { parameters: { properties: { [key]: { type: 'string' } }, required: [key] } } }] }, SHAPE)).toBeNull();
    }
    const proto = JSON.parse('{"tools":[{"function":{"parameters":{"properties":{"__proto__":{"type":"string"}}}}}]}') as unknown;
    expect(findJsonBoundsProblem(proto, SHAPE)).toEqual({ kind: 'prototype_key', path: 'tools[0].function.parameters.properties.__proto__' });
  });

  test('Anthropic paths are dotted', () => {
    const anthropic: JsonShape = { pathStyle: 'dots', freeForm: [['tools', '*', 'input_schema']] };
    expect(findJsonBoundsProblem({ tools: [{ input_schema: nested(100) }] }, anthropic)).toMatchObject({ path: 'tools.0.input_schema' });
    expect(findJsonBoundsProblem({ messages: [{ content: [{ toString: 1 }] }] }, anthropic)).toEqual({ kind: 'prototype_key', path: 'messages.0.content.0.toString' });
  });

  test('a problem is a 400 naming the parameter', () => {
    const error = (() => {
      try {
        assertJsonWithinBounds({ valueOf: 0 }, SHAPE);
      } catch (caught) {
        return caught as GatewayError;
      }
      throw new Error('expected a refusal');
    })();
    expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'valueOf' });
  });

  test('nesting of JSON text is measured outside strings', () => {
    expect(jsonTextNestsDeeperThan('{"a":{"b":[1,2,{"c":3}]}}', 3)).toBe(true);
    expect(jsonTextNestsDeeperThan('{"a":{"b":[1,2,{"c":3}]}}', 4)).toBe(false);
    expect(jsonTextNestsDeeperThan(`{"text":"${'['.repeat(500)}"}`, 2)).toBe(false);
    expect(jsonTextNestsDeeperThan(`{"text":"\\"${'{'.repeat(500)}"}`, 2)).toBe(false);
    expect(jsonTextNestsDeeperThan('['.repeat(65) + ']'.repeat(65), 64)).toBe(true);
  });
});

describe('the JSON body parser', () => {
  const refusal = (text: string, style: 'brackets' | 'dots' = 'brackets') => {
    try {
      parseJsonBody(text, style);
    } catch (error) {
      return error as GatewayError;
    }
    throw new Error('expected a refusal');
  };

  test('empty and malformed bodies are invalid_json', () => {
    expect(refusal('')).toMatchObject({ status: 400, code: 'invalid_json' });
    expect(refusal('{"model":')).toMatchObject({ status: 400, code: 'invalid_json' });
  });

  test('__proto__ anywhere, literal or escaped, and constructor.prototype are refused by path', () => {
    expect(refusal('{"__proto__":{"admin":true}}')).toMatchObject({ code: 'unsupported_parameter', param: '__proto__' });
    expect(refusal('{"messages":[{"content":[{"\\u005f_proto__":1}]}]}')).toMatchObject({ param: 'messages[0].content[0].__proto__' });
    expect(refusal('{"messages":[{"content":[{"__proto__":1}]}]}', 'dots')).toMatchObject({ param: 'messages.0.content.0.__proto__' });
    expect(refusal('{"a":{"constructor":{"prototype":{"polluted":1}}}}')).toMatchObject({ param: 'a.constructor.prototype' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('ordinary bodies, a constructor value and deep nesting parse (bounds are the client format’s job)', () => {
    expect(parseJsonBody('{"model":"chat","constructor":1}', 'brackets')).toEqual({ model: 'chat', constructor: 1 });
    expect(parseJsonBody('{"name":"caf\\u00e9"}', 'brackets')).toEqual({ name: 'café' });
    expect(() => parseJsonBody('['.repeat(200_000) + ']'.repeat(200_000), 'brackets')).not.toThrow();
  });
});
