import type { DomainEvent } from './event.js';

/** Same shape as a key's limits (KeyLimits): `inputTpm` / `outputTpm` are left out when unset. */
export interface TenantLimits {
  rpm: number | null;
  tpm: number | null;
  inputTpm?: number | null;
  outputTpm?: number | null;
  maxConcurrency: number | null;
}

export interface TenantBudget {
  monthlyUsd: string;
  /** Percentages at which BudgetThresholdCrossed is recorded (soft alerts). */
  softPct: number;
  /** What happens at 100%: reject with 402, or only alert. */
  enforcement: 'hard' | 'soft';
}

export type TenantCreated = DomainEvent<'TenantCreated', { tenantId: string; name: string }>;
export type TenantLimitsSet = DomainEvent<'TenantLimitsSet', { tenantId: string; limits: TenantLimits }>;
export type TenantBudgetSet = DomainEvent<'TenantBudgetSet', { tenantId: string; budget: TenantBudget | null }>;
export type TenantSuspended = DomainEvent<'TenantSuspended', { tenantId: string; reason: string | null }>;
export type TenantReinstated = DomainEvent<'TenantReinstated', { tenantId: string }>;
export type BudgetThresholdCrossed = DomainEvent<
  'BudgetThresholdCrossed',
  { tenantId: string; period: string; pct: number; spentUsd: string; budgetUsd: string }
>;

export type TenantEvent = TenantCreated | TenantLimitsSet | TenantBudgetSet | TenantSuspended | TenantReinstated | BudgetThresholdCrossed;
export const TENANT_EVENT_TYPES = [
  'TenantCreated', 'TenantLimitsSet', 'TenantBudgetSet', 'TenantSuspended', 'TenantReinstated', 'BudgetThresholdCrossed',
] as const;

export const tenantStream = (tenantId: string) => `tenant-${tenantId}`;
