import { Allow, IsIn, IsOptional, Matches } from 'class-validator';

/**
 * `GET /admin/v1/content-policies?limit=&pageToken=&status=`: pages in id order. `limit` and `pageToken`
 * are read by the admin lists' shared reader (list-page.ts); `after` (the last id, the answer's `next`)
 * is the older way to page and stays for the clients that use it.
 */
export class ContentPoliciesQueryDto {
  @IsOptional() @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: 'after must be a content policy id (the `next` of the previous page)' })
  after?: string;

  @Allow()
  limit?: unknown;

  @Allow()
  pageToken?: unknown;

  /** `live` (default), `retired`, or `all`. */
  @IsOptional() @IsIn(['live', 'retired', 'all'])
  status?: 'live' | 'retired' | 'all';
}

/** `?dryRun=true` on a write: the answer says what would be appended, and nothing is. */
export class DryRunQueryDto {
  @IsOptional() @IsIn(['true', 'false'])
  dryRun?: 'true' | 'false';
}
