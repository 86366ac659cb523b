import { IsIn, IsISO8601, IsOptional, Matches } from 'class-validator';
import { GRANULARITIES, type Granularity, SPEND_DIMENSION_NAMES } from './spend-query.js';

const VALUE = /^[^\u0000-\u001f\u007f]{1,200}$/;
const GROUP_BY = new RegExp(`^(${SPEND_DIMENSION_NAMES.join('|')})(,(${SPEND_DIMENSION_NAMES.join('|')}))*$`);

/** `GET /admin/v1/analytics/spend?from&to&groupBy&granularity&format&source` plus one filter per dimension. */
export class SpendQueryDto {
  /**
   * Inclusive start, on a boundary of the granularity (UTC): a whole hour, midnight, a Monday's midnight, a
   * month's first midnight. With `to`, absent = the current calendar month so far.
   */
  @IsOptional() @IsISO8601({ strict: true })
  from?: string;

  /** Exclusive end, on a boundary likewise. */
  @IsOptional() @IsISO8601({ strict: true })
  to?: string;

  @IsOptional() @IsIn(GRANULARITIES)
  granularity?: Granularity;

  /** Comma-separated: tenant, key, alias, deployment, provider, model. */
  @IsOptional() @Matches(GROUP_BY, { message: `groupBy must be a comma-separated list of ${SPEND_DIMENSION_NAMES.join(', ')}` })
  groupBy?: string;

  /** json (default) or csv; `Accept: text/csv` also selects CSV. */
  @IsOptional() @IsIn(['json', 'csv'])
  format?: 'json' | 'csv';

  /** auto (default): ClickHouse when configured and caught up, else PostgreSQL. */
  @IsOptional() @IsIn(['auto', 'clickhouse', 'postgres'])
  source?: 'auto' | 'clickhouse' | 'postgres';

  @IsOptional() @Matches(VALUE) tenant?: string;
  @IsOptional() @Matches(VALUE) key?: string;
  @IsOptional() @Matches(VALUE) alias?: string;
  @IsOptional() @Matches(VALUE) deployment?: string;
  @IsOptional() @Matches(VALUE) provider?: string;
  @IsOptional() @Matches(VALUE) model?: string;
}
