import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, Min, ValidateNested } from 'class-validator';
import { KEY_SCOPES, type KeyScope } from '../../../events/index.js';
import { KEY_ID } from '../api-key/api-key.decider.js';
import { LimitsDto } from '../../admin/index.js';
import { TenantBudgetDto } from './tenant.dto.js';

export class IssueKeyDto {
  /** Generated when absent. */
  @IsOptional() @Matches(KEY_ID, { message: 'id must use letters, digits, ".", "_" and "-" (at most 64)' })
  id?: string;

  @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { message: 'tenant must be a tenant id' })
  tenant!: string;

  /** Default: inference and models:read. */
  @IsOptional() @IsArray() @ArrayNotEmpty() @IsIn(KEY_SCOPES, { each: true })
  scopes?: KeyScope[];

  /** Aliases the key may call; absent or empty = every alias. */
  @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true })
  aliases?: string[];

  @IsOptional() @ValidateNested() @Type(() => LimitsDto)
  limits?: LimitsDto;

  @IsOptional() @IsISO8601({ strict: true })
  expiresAt?: string;

  @IsOptional() @ValidateNested() @Type(() => TenantBudgetDto)
  budget?: TenantBudgetDto;
}

/** PATCH: members present replace the key's; absent ones stay; `null` clears expiry or budget. */
export class UpdateKeyDto {
  @IsOptional() @IsArray() @ArrayNotEmpty() @IsIn(KEY_SCOPES, { each: true })
  scopes?: KeyScope[];

  @IsOptional() @IsArray() @ArrayMaxSize(1000) @IsString({ each: true })
  aliases?: string[];

  @IsOptional() @ValidateNested() @Type(() => LimitsDto)
  limits?: LimitsDto;

  @IsOptional() @IsISO8601({ strict: true })
  expiresAt?: string | null;

  @IsOptional() @ValidateNested() @Type(() => TenantBudgetDto)
  budget?: TenantBudgetDto | null;
}

export class RotateKeyDto {
  /** How long the previous secret keeps working (seconds, at most 30 days); absent or 0 = it stops now. */
  @IsOptional() @IsInt() @Min(0) @Max(2_592_000)
  overlapSeconds?: number;
}
