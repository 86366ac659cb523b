import { IsInt, IsOptional, Min } from 'class-validator';

/** Requests per minute, tokens per minute, concurrent requests; absent or null = unlimited. */
export class LimitsDto {
  @IsOptional() @IsInt() @Min(1)
  rpm?: number | null;

  @IsOptional() @IsInt() @Min(1)
  tpm?: number | null;

  @IsOptional() @IsInt() @Min(1)
  maxConcurrency?: number | null;
}

export function limitsOf(dto: LimitsDto | undefined | null): { rpm: number | null; tpm: number | null; maxConcurrency: number | null } {
  return { rpm: dto?.rpm ?? null, tpm: dto?.tpm ?? null, maxConcurrency: dto?.maxConcurrency ?? null };
}
