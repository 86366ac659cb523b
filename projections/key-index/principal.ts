import type { KeyLimits, KeyScope, TenantBudget, TenantLimits } from '../../events/index.js';

/** Who a gateway key speaks for, as the data plane needs it. Never carries the key itself. */
export interface Principal {
  keyId: string;
  prefix: string;
  tenantId: string;
  scopes: ReadonlySet<KeyScope>;
  /** Aliases the key may call; null = all. */
  aliases: ReadonlySet<string> | null;
  limits: KeyLimits;
  /** The key's own budget (its tenant's is in `tenant`); null = none. */
  budget: TenantBudget | null;
  /** Epoch ms; null = never. */
  expiresAt: number | null;
  /** Set on a rotated-out secret still inside its overlap window: when it stops working (epoch ms). */
  rotatedAt?: number;
  tenant: {
    status: 'active' | 'suspended';
    limits: TenantLimits;
    budget: TenantBudget | null;
  };
}

export function mayUseAlias(principal: Principal, alias: string): boolean {
  return principal.aliases === null || principal.aliases.has(alias);
}
