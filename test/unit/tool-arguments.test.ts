import { toolArgumentsObject } from '../../modules/canonical/tool-arguments.js';

describe('tool-call arguments as an object, parsed once per request', () => {
  const call = (args: string) => ({ id: 'call_1', name: 'lookup', arguments: args });

  test('an object is returned as parsed; empty arguments are {}; arrays, scalars and broken JSON are null', () => {
    expect(toolArgumentsObject(call('{"city":"Paris","days":[1,2]}'))).toEqual({ city: 'Paris', days: [1, 2] });
    expect(toolArgumentsObject(call('   '))).toEqual({});
    expect(toolArgumentsObject(call('[1,2]'))).toBeNull();
    expect(toolArgumentsObject(call('42'))).toBeNull();
    expect(toolArgumentsObject(call('{"city":'))).toBeNull();
  });

  test('every adapter and candidate asking about the same call gets the same object: no JSON round trip per candidate', () => {
    const one = call('{"q":"weather"}');
    const first = toolArgumentsObject(one);
    expect(toolArgumentsObject(one)).toBe(first);
    expect(toolArgumentsObject(call('{"q":"weather"}'))).not.toBe(first); // another request's call is parsed on its own
  });
});
