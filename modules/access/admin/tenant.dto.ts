import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { TENANT_ID } from '../tenant/tenant.decider.js';

export class CreateTenantDto {
  @Matches(TENANT_ID, { message: 'id must use letters, digits, ".", "_" and "-" (at most 64)' })
  id!: string;

  @IsOptional() @IsString() @MaxLength(200)
  name?: string;
}

export class TenantBudgetDto {
  @Matches(/^\d+(\.\d+)?$/, { message: 'monthlyUsd must be a decimal string such as "500"' })
  monthlyUsd!: string;

  @IsOptional() @IsInt() @Min(1) @Max(100)
  softPct?: number;

  @IsOptional() @IsIn(['hard', 'soft'])
  enforcement?: 'hard' | 'soft';
}
