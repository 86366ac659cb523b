import { IsInt, IsOptional, Min } from 'class-validator';
import type { TenantLimits } from '../../events/index.js';

/** Requests per minute, tokens per minute, concurrent requests; absent or null = unlimited. */
export class LimitsDto {
  @IsOptional() @IsInt() @Min(1)
  rpm?: number | null;

  @IsOptional() @IsInt() @Min(1)
  tpm?: number | null;

  /** Input tokens per minute. */
  @IsOptional() @IsInt() @Min(1)
  inputTpm?: number | null;

  /** Output tokens per minute. */
  @IsOptional() @IsInt() @Min(1)
  outputTpm?: number | null;

  @IsOptional() @IsInt() @Min(1)
  maxConcurrency?: number | null;
}

/** The event form: input / output token limits are left out when unset (as apply writes them). */
export function limitsOf(dto: LimitsDto | undefined | null): TenantLimits {
  return {
    rpm: dto?.rpm ?? null,
    tpm: dto?.tpm ?? null,
    ...(dto?.inputTpm ? { inputTpm: dto.inputTpm } : {}),
    ...(dto?.outputTpm ? { outputTpm: dto.outputTpm } : {}),
    maxConcurrency: dto?.maxConcurrency ?? null,
  };
}
