import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Matches, Max, Min } from 'class-validator';

/** `GET /admin/v1/content-policies?after=&limit=&status=`: pages in id order; `after` is the last id of the previous page (its `next`). */
export class ContentPoliciesQueryDto {
  @IsOptional() @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: 'after must be a content policy id (the `next` of the previous page)' })
  after?: string;

  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1000)
  limit?: number;

  /** `live` (default), `retired`, or `all`. */
  @IsOptional() @IsIn(['live', 'retired', 'all'])
  status?: 'live' | 'retired' | 'all';
}

/** `?dryRun=true` on a write: the answer says what would be appended, and nothing is. */
export class DryRunQueryDto {
  @IsOptional() @IsIn(['true', 'false'])
  dryRun?: 'true' | 'false';
}
