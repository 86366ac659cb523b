import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayNotEmpty, IsArray, IsIn, IsISO8601, IsOptional, IsString, Matches, ValidateNested } from 'class-validator';
import { KEY_SCOPES, type KeyScope } from '../../../events/index.js';
import { KEY_ID } from '../api-key/api-key.decider.js';
import { LimitsDto } from '../../admin/index.js';

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
}
