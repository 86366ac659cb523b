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
});
