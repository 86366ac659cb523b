import { Transform, Type } from 'class-transformer';
import { IsIn, IsISO8601, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

const TYPE_LIST = /^[A-Za-z][A-Za-z0-9]{0,63}(,[A-Za-z][A-Za-z0-9]{0,63}){0,49}$/;

/** `GET /admin/v1/events?after=&stream=&type=&limit=` */
export class EventsQueryDto {
  /** A page token from `next`, or the global position of an event. */
  @IsOptional() @IsString() @MaxLength(200)
  after?: string;

  @IsOptional() @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, { message: 'stream must be a stream id such as request-<id> or alias-chat' })
  stream?: string;

  /** One event type or a comma-separated list. */
  @IsOptional() @Matches(TYPE_LIST, { message: 'type must be an event type or a comma-separated list of them' })
  type?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;
}

/** `GET /admin/v1/audit?actor=&action=&from=&to=&after=&limit=` */
export class AuditQueryDto {
  /** As recorded in event metadata: `admin:<token id>`, `key:<key id>`, `config:<file>`. */
  @IsOptional() @IsString() @MaxLength(300)
  actor?: string;

  /** A control-plane event type or a comma-separated list, e.g. AliasPublished,ApiKeyRevoked. */
  @IsOptional() @Matches(TYPE_LIST, { message: 'action must be an event type or a comma-separated list of them' })
  action?: string;

  @IsOptional() @IsISO8601({ strict: true })
  from?: string;

  @IsOptional() @IsISO8601({ strict: true })
  to?: string;

  @IsOptional() @IsString() @MaxLength(200)
  after?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;
}

const LISTED_STATUSES = ['success', 'failed', 'cancelled', 'rejected', 'incomplete'] as const;

/** An empty parameter (`?tenant=`, what a form sends for a field left blank) is an absent one. */
const Blank = () => Transform(({ value }) => (value === '' ? undefined : value));

/** `GET /admin/v1/requests?tenant=&key=&alias=&status=&from=&to=&limit=&pageToken=` */
export class RequestsQueryDto {
  @Blank() @IsOptional() @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, { message: 'tenant must be a tenant id' })
  tenant?: string;

  @Blank() @IsOptional() @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/, { message: 'key must be a key id' })
  key?: string;

  @Blank() @IsOptional() @IsString() @MaxLength(200)
  alias?: string;

  @Blank() @IsOptional() @IsIn(LISTED_STATUSES, { message: `status must be one of ${LISTED_STATUSES.join(', ')}` })
  status?: (typeof LISTED_STATUSES)[number];

  /** Requests at or after this time. */
  @Blank() @IsOptional() @IsISO8601({ strict: true })
  from?: string;

  /** Requests before this time. */
  @Blank() @IsOptional() @IsISO8601({ strict: true })
  to?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(200)
  limit?: number;

  /** `nextPageToken` of the previous page. */
  @Blank() @IsOptional() @IsString() @MaxLength(200)
  pageToken?: string;
}
