import { IsIn, IsISO8601, IsOptional } from 'class-validator';

/** `?period=day|month&from=ISO&to=ISO` of the spend reads. */
export class SpendQueryDto {
  @IsOptional() @IsIn(['day', 'month'])
  period?: 'day' | 'month';

  @IsOptional() @IsISO8601({ strict: true })
  from?: string;

  @IsOptional() @IsISO8601({ strict: true })
  to?: string;
}
