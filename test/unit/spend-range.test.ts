import { resolveSpendRequest, SpendRequestError } from '../../modules/analytics/spend-range.js';

const at = (iso: string) => new Date(iso);

function refusal(request: Parameters<typeof resolveSpendRequest>[0]): SpendRequestError {
  try {
    resolveSpendRequest(request, at('2026-12-06T13:40:00Z'));
  } catch (error) {
    if (error instanceof SpendRequestError) return error;
    throw error;
  }
  throw new Error('the request was accepted');
}

describe('the range of a spend report', () => {
  test('ranges off the granularity\'s boundaries are refused naming the parameter; so is one of from/to alone', () => {
    const cases: Array<[Parameters<typeof resolveSpendRequest>[0], string, string, string]> = [
      [{ from: '2026-11-03T00:00:00Z', to: '2026-11-10T00:00:00Z', granularity: 'week' }, 'unaligned_range', 'from', "from must be on a Monday's midnight (UTC) for granularity=week."],
      [{ from: '2026-11-02T00:00:00Z', to: '2026-11-10T00:00:00Z', granularity: 'week' }, 'unaligned_range', 'to', "to must be on a Monday's midnight (UTC) for granularity=week."],
      [{ from: '2026-11-02T01:00:00Z', to: '2026-11-09T00:00:00Z', granularity: 'week' }, 'unaligned_range', 'from', "from must be on a Monday's midnight (UTC) for granularity=week."],
      [{ from: '2026-11-01T00:00:00Z', to: '2026-12-02T00:00:00Z', granularity: 'month' }, 'unaligned_range', 'to', 'to must be on the first day of a month at midnight (UTC) for granularity=month.'],
      [{ from: '2026-11-01T00:30:00Z', to: '2026-11-02T00:00:00Z', granularity: 'hour' }, 'unaligned_range', 'from', 'from must be on a whole hour (UTC) for granularity=hour.'],
      [{ from: '2026-11-01T00:00:00Z', to: '2026-11-02T06:00:00Z' }, 'unaligned_range', 'to', 'to must be on midnight (UTC) for granularity=day.'],
      [{ from: '2026-12-01T00:00:00Z', to: '2026-11-01T00:00:00Z', granularity: 'month' }, 'invalid_range', 'from', 'from must be before to.'],
      [{ to: '2026-12-01T00:00:00Z' }, 'invalid_range', 'from', 'from is missing: give both from and to, or neither for the current month so far.'],
      [{ from: '2026-12-01T00:00:00Z' }, 'invalid_range', 'to', 'to is missing: give both from and to, or neither for the current month so far.'],
      [{ from: '2000-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z', granularity: 'hour' }, 'range_too_large', 'granularity', 'At most 10000 hours per request; narrow the range or use a coarser granularity.'],
    ];
    for (const [request, code, field, message] of cases) {
      const error = refusal(request);
      expect([JSON.stringify(request), error.code, error.field, error.message]).toEqual([JSON.stringify(request), code, field, message]);
    }
  });

  test('aligned weeks and months are answered as asked', () => {
    expect(resolveSpendRequest({ from: '2026-11-02T00:00:00Z', to: '2026-11-16T00:00:00Z', granularity: 'week' }))
      .toMatchObject({ from: at('2026-11-02T00:00:00Z'), to: at('2026-11-16T00:00:00Z'), granularity: 'week', range: 'requested' });
    expect(resolveSpendRequest({ from: '2025-12-01T00:00:00Z', to: '2027-01-01T00:00:00Z', granularity: 'month' }))
      .toMatchObject({ granularity: 'month', range: 'requested' });
  });

  test('without from and to: the current calendar month so far, to the next midnight (the next hour by the hour)', () => {
    const now = at('2026-12-06T13:40:00Z');
    for (const granularity of ['day', 'week', 'month'] as const) {
      expect(resolveSpendRequest({ granularity }, now)).toMatchObject({ from: at('2026-12-01T00:00:00Z'), to: at('2026-12-07T00:00:00Z'), range: 'current-month' });
    }
    expect(resolveSpendRequest({ granularity: 'hour' }, now)).toMatchObject({ from: at('2026-12-01T00:00:00Z'), to: at('2026-12-06T14:00:00Z') });
    // The last moment of a month and the first of the next.
    expect(resolveSpendRequest({}, at('2026-12-31T23:59:59.999Z'))).toMatchObject({ from: at('2026-12-01T00:00:00Z'), to: at('2027-01-01T00:00:00Z'), granularity: 'day' });
    expect(resolveSpendRequest({}, at('2027-01-01T00:00:00Z'))).toMatchObject({ from: at('2027-01-01T00:00:00Z'), to: at('2027-01-02T00:00:00Z') });
  });

  test('groups are kept once each, filters only when given', () => {
    expect(resolveSpendRequest({ groupBy: ['tenant', 'model', 'tenant'], filters: { tenant: 'acme' } }, at('2026-12-06T00:00:00Z')))
      .toMatchObject({ groupBy: ['tenant', 'model'], filters: { tenant: 'acme' } });
  });
});
