import { IsIn, IsISO8601, IsOptional, Matches } from 'class-validator';
import type { PriceTable } from '../../../events/index.js';

const DECIMAL = /^\d+(\.\d+)?$/;
const decimal = (name: string) => ({ message: `${name} must be a decimal string such as "0.15" (never a binary float)` });

/** USD per one million tokens, as decimal strings; effective from `effectiveFrom` (default: now). */
export class SchedulePriceDto {
  @IsOptional() @IsISO8601({ strict: true })
  effectiveFrom?: string;

  @Matches(DECIMAL, decimal('inputPer1M'))
  inputPer1M!: string;

  @Matches(DECIMAL, decimal('outputPer1M'))
  outputPer1M!: string;

  @IsOptional() @Matches(DECIMAL, decimal('cachedInputPer1M'))
  cachedInputPer1M?: string | null;

  @IsOptional() @Matches(DECIMAL, decimal('cacheWritePer1M'))
  cacheWritePer1M?: string | null;

  @IsOptional() @Matches(DECIMAL, decimal('reasoningPer1M'))
  reasoningPer1M?: string | null;

  @IsOptional() @IsIn(['USD'])
  currency?: 'USD';
}

export function priceTableOf(dto: SchedulePriceDto): PriceTable {
  return {
    inputPer1M: dto.inputPer1M,
    outputPer1M: dto.outputPer1M,
    cachedInputPer1M: dto.cachedInputPer1M ?? null,
    cacheWritePer1M: dto.cacheWritePer1M ?? null,
    reasoningPer1M: dto.reasoningPer1M ?? null,
    currency: 'USD',
  };
}
