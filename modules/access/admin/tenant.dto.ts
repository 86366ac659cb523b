import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import type { TenantBudget } from '../../../events/index.js';
import { BUDGET_DEFAULTS, TENANT_ID } from '../tenant/tenant.decider.js';

export class CreateTenantDto {
  @Matches(TENANT_ID, { message: 'id must use letters, digits, ".", "_" and "-" (at most 64)' })
  id!: string;

  @IsOptional() @IsString() @MaxLength(200)
  name?: string;
}

export class BudgetWebhookDto {
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  url!: string;

  /** Secret reference of the signing key: env:NAME or file:PATH. */
  @Matches(/^(env|file):.+/, { message: 'secret must be a secret reference (env:NAME or file:PATH)' })
  secret!: string;

  /** Allows loopback, private and link-local addresses (never cloud metadata), as a provider's does. */
  @IsOptional() @IsBoolean()
  allowPrivateNetwork?: boolean;
}

export class TenantBudgetDto {
  @IsOptional() @Matches(/^\d+(\.\d+)?$/, { message: 'monthlyUsd must be a decimal string such as "500"' })
  monthlyUsd?: string;

  @IsOptional() @Matches(/^\d+(\.\d+)?$/, { message: 'dailyUsd must be a decimal string such as "20"' })
  dailyUsd?: string;

  @IsOptional() @ValidateNested() @Type(() => BudgetWebhookDto)
  webhook?: BudgetWebhookDto;

  @IsOptional() @IsInt() @Min(1) @Max(100)
  softPct?: number;

  @IsOptional() @IsIn(['hard', 'soft'])
  enforcement?: 'hard' | 'soft';
}

/** The event form of a budget: members that are not set are left out. */
export function budgetOf(body: TenantBudgetDto): TenantBudget {
  return {
    ...(body.monthlyUsd !== undefined ? { monthlyUsd: body.monthlyUsd } : {}),
    ...(body.dailyUsd !== undefined ? { dailyUsd: body.dailyUsd } : {}),
    softPct: body.softPct ?? BUDGET_DEFAULTS.softPct,
    enforcement: body.enforcement ?? BUDGET_DEFAULTS.enforcement,
    ...(body.webhook
      ? { webhook: { url: body.webhook.url, secret: body.webhook.secret, ...(body.webhook.allowPrivateNetwork ? { allowPrivateNetwork: true } : {}) } }
      : {}),
  };
}
