import { SchemaNotRepresentable, toGeminiParameters, toGeminiSchema } from '../../modules/providers/gemini/gemini-schema.js';

describe('JSON Schema → Gemini Schema', () => {
  test('strips keywords Gemini rejects and upper-cases types, keeping what it knows', () => {
    expect(
      toGeminiSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'urn:order',
        title: 'Order',
        type: 'object',
        additionalProperties: false,
        examples: [{ id: 1 }],
        properties: {
          id: { type: 'integer', minimum: 1, format: 'int64' },
          email: { type: 'string', format: 'email', maxLength: 200 },
          placed: { type: 'string', format: 'date-time' },
          tags: { type: 'array', items: { type: 'string' }, minItems: 1, uniqueItems: true },
        },
        required: ['id', 'missing'],
        patternProperties: { '^x-': { type: 'string' } },
      }),
    ).toEqual({
      title: 'Order',
      type: 'OBJECT',
      properties: {
        id: { type: 'INTEGER', minimum: 1, format: 'int64' },
        // Gemini accepts only enum/date-time formats on strings: "email" would be a 400.
        email: { type: 'STRING', maxLength: 200 },
        placed: { type: 'STRING', format: 'date-time' },
        tags: { type: 'ARRAY', items: { type: 'STRING' }, minItems: 1 },
      },
      // A required name with no property would be rejected too.
      required: ['id'],
    });
  });

  test('nullable forms: type arrays with null, anyOf with a null branch', () => {
    expect(toGeminiSchema({ type: ['string', 'null'] })).toEqual({ type: 'STRING', nullable: true });
    expect(toGeminiSchema({ anyOf: [{ type: 'integer' }, { type: 'null' }], description: 'count' })).toEqual({ type: 'INTEGER', description: 'count', nullable: true });
  });

  test('oneOf becomes anyOf; a multi-type array becomes alternatives', () => {
    expect(toGeminiSchema({ oneOf: [{ type: 'string' }, { type: 'number' }] })).toEqual({ anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] });
    expect(toGeminiSchema({ type: ['string', 'integer'] })).toEqual({ anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }] });
  });

  test('const becomes a one-value string enum; non-string enums are dropped rather than sent', () => {
    expect(toGeminiSchema({ const: 'fixed' })).toEqual({ type: 'STRING', enum: ['fixed'] });
    expect(toGeminiSchema({ type: 'integer', enum: [1, 2] })).toEqual({ type: 'INTEGER' });
  });

  test('local $refs are inlined, sibling keywords refine them', () => {
    expect(
      toGeminiSchema({
        type: 'object',
        $defs: { address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
        properties: { home: { $ref: '#/$defs/address', description: 'Where they live' }, work: { allOf: [{ $ref: '#/$defs/address' }] } },
      }),
    ).toEqual({
      type: 'OBJECT',
      properties: {
        home: { type: 'OBJECT', description: 'Where they live', properties: { city: { type: 'STRING' } }, required: ['city'] },
        work: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
      },
    });
  });

  test('recursive, remote or dangling refs are refused, never silently reshaped', () => {
    expect(() => toGeminiSchema({ definitions: { n: { properties: { next: { $ref: '#/definitions/n' } } } }, $ref: '#/definitions/n' })).toThrow(SchemaNotRepresentable);
    expect(() => toGeminiSchema({ $ref: 'https://example.com/schema.json' })).toThrow(/only local/);
    expect(() => toGeminiSchema({ $ref: '#/$defs/absent' })).toThrow(/does not resolve/);
  });

  test('tool parameters: an object without properties sends no parameters at all', () => {
    expect(toGeminiParameters({ type: 'object', properties: {}, additionalProperties: false })).toBeUndefined();
    expect(toGeminiParameters({ type: 'object' })).toBeUndefined();
    expect(toGeminiParameters({ type: 'object', properties: { q: { type: 'string' } } })).toEqual({ type: 'OBJECT', properties: { q: { type: 'STRING' } } });
  });

  test('nested empty objects lose their empty properties (Gemini rejects them) but keep their type', () => {
    expect(toGeminiSchema({ type: 'object', properties: { meta: { type: 'object', properties: {} } } })).toEqual({
      type: 'OBJECT',
      properties: { meta: { type: 'OBJECT' } },
    });
  });

  test('property names like Object.prototype members are ordinary properties; required is checked against own properties', () => {
    const converted = toGeminiSchema({
      type: 'object',
      properties: { constructor: { type: 'string' }, toString: { type: 'integer' } },
      required: ['constructor', 'hasOwnProperty', 'valueOf'],
    });
    expect(converted).toEqual({ type: 'OBJECT', properties: { constructor: { type: 'STRING' }, toString: { type: 'INTEGER' } }, required: ['constructor'] });
    expect(Object.hasOwn(converted.properties as object, 'constructor')).toBe(true);
  });

  test('a $ref into inherited members does not resolve', () => {
    expect(() => toGeminiSchema({ $ref: '#/__proto__' })).toThrow(/does not resolve/);
    expect(() => toGeminiSchema({ $ref: '#/constructor/prototype' })).toThrow(/does not resolve/);
  });

  test('refs that multiply the schema (each definition using the next twice) are refused once they pass 20,000 nodes', () => {
    const defs: Record<string, unknown> = { d15: { type: 'string' } };
    for (let i = 0; i < 15; i++) defs[`d${i}`] = { type: 'object', properties: { left: { $ref: `#/$defs/d${i + 1}` }, right: { $ref: `#/$defs/d${i + 1}` } } };
    // About 2^16 nodes once inlined, from a schema of 46; 15 levels stay within Gemini's depth.
    expect(() => toGeminiSchema({ $defs: defs, $ref: '#/$defs/d0' })).toThrow(/more than 20000 nodes/);
    const small: Record<string, unknown> = { d5: { type: 'string' } };
    for (let i = 0; i < 5; i++) small[`d${i}`] = { type: 'object', properties: { left: { $ref: `#/$defs/d${i + 1}` }, right: { $ref: `#/$defs/d${i + 1}` } } };
    expect(() => toGeminiSchema({ $defs: small, $ref: '#/$defs/d0' })).not.toThrow();
  });
});
