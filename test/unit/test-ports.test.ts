import { OWN_POSTGRES_PORTS, SPOOL_PORTS, ephemeralPortRange, testPort } from '../support/port-range.js';

/**
 * The ports test servers listen on must be ones no outgoing connection can be holding: an earlier
 * layout put them inside the kernel's ephemeral range and CI failed when a client socket had one.
 */
describe('test servers\' ports', () => {
  const ranges = [
    { name: 'fixed ports', first: testPort(0), last: testPort(1999) },
    { name: 'spool gateways', ...SPOOL_PORTS },
    { name: 'PostgreSQL of a test\'s own', ...OWN_POSTGRES_PORTS },
  ];

  test.each(ranges)('$name lie outside the kernel\'s ephemeral range', ({ first, last }) => {
    const ephemeral = ephemeralPortRange() ?? { first: 32_768, last: 60_999 };
    expect(last < ephemeral.first || first > ephemeral.last).toBe(true);
  });

  test('an offset outside the block is refused', () => {
    expect(() => testPort(2000)).toThrow(/outside/);
    expect(() => testPort(-1)).toThrow(/outside/);
    expect(() => testPort(1.5)).toThrow(/outside/);
  });
});
