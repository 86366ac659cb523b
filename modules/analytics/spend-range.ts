import { type Granularity, SPEND_DIMENSION_NAMES, type SpendDimension, type SpendQuery } from './spend-query.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Bounds one answer: about 14 months of hours, 27 years of days, and more than that of weeks or months. */
const MAX_BUCKETS = 10_000;

/** What a caller asked for, before defaults and checks (the analytics API's query, the CLI's flags). */
export interface SpendRequest {
  from?: string;
  to?: string;
  granularity?: Granularity;
  groupBy?: readonly SpendDimension[];
  filters?: Partial<Record<SpendDimension, string>>;
}

/** `requested`: the caller's from/to; `current-month`: none given, so the current calendar month (UTC) so far. */
export type SpendRangeBasis = 'requested' | 'current-month';

export interface ResolvedSpendQuery extends SpendQuery {
  range: SpendRangeBasis;
}

/** A request that cannot be answered as asked; `field` is the parameter to fix. */
export class SpendRequestError extends Error {
  override readonly name = 'SpendRequestError';
  constructor(readonly code: 'unaligned_range' | 'invalid_range' | 'range_too_large', readonly field: 'from' | 'to' | 'granularity', message: string) {
    super(message);
  }
}

/**
 * The query a request stands for. From and to go together: both absent = the current calendar month so far
 * (its first midnight to the next whole hour for granularity=hour, else the next midnight), whose first
 * week may begin before the month and is then counted from the 1st. Given ones must lie on boundaries of the
 * granularity: the rollups cannot split a bucket, and a week or month cut short would read as a whole one.
 */
export function resolveSpendRequest(request: SpendRequest, now = new Date()): ResolvedSpendQuery {
  const granularity = request.granularity ?? 'day';
  if ((request.from === undefined) !== (request.to === undefined)) {
    const missing = request.from === undefined ? 'from' : 'to';
    throw new SpendRequestError('invalid_range', missing, `${missing} is missing: give both from and to, or neither for the current month so far.`);
  }
  let from: Date;
  let to: Date;
  let range: SpendRangeBasis;
  if (request.from === undefined || request.to === undefined) {
    from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    to = new Date(granularity === 'hour' ? Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS : Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS);
    range = 'current-month';
  } else {
    from = new Date(request.from);
    to = new Date(request.to);
    for (const [name, at] of [['from', from], ['to', to]] as const) {
      if (!isBoundary(at, granularity)) throw new SpendRequestError('unaligned_range', name, `${name} must be ${BOUNDARY[granularity]} (UTC) for granularity=${granularity}.`);
    }
    range = 'requested';
  }
  if (from >= to) throw new SpendRequestError('invalid_range', 'from', 'from must be before to.');
  if (buckets(from, to, granularity) > MAX_BUCKETS) {
    throw new SpendRequestError('range_too_large', 'granularity', `At most ${MAX_BUCKETS} ${granularity}s per request; narrow the range or use a coarser granularity.`);
  }
  const groupBy = [...new Set(request.groupBy ?? [])];
  const filters = Object.fromEntries(SPEND_DIMENSION_NAMES.filter((d) => request.filters?.[d] !== undefined).map((d) => [d, request.filters![d]!]));
  return { from, to, granularity, groupBy, filters, range };
}

const BOUNDARY: Record<Granularity, string> = {
  hour: 'on a whole hour',
  day: 'on midnight',
  week: "on a Monday's midnight",
  month: "on the first day of a month at midnight",
};

function isBoundary(at: Date, granularity: Granularity): boolean {
  const ms = at.getTime();
  if (granularity === 'hour') return ms % HOUR_MS === 0;
  if (ms % DAY_MS !== 0) return false;
  if (granularity === 'week') return at.getUTCDay() === 1;
  if (granularity === 'month') return at.getUTCDate() === 1;
  return true;
}

function buckets(from: Date, to: Date, granularity: Granularity): number {
  const span = to.getTime() - from.getTime();
  if (granularity === 'hour') return span / HOUR_MS;
  if (granularity === 'day') return span / DAY_MS;
  if (granularity === 'week') return span / (7 * DAY_MS);
  return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth();
}
