import type { DomainEvent } from './event.js';

/** Same shape as a key's limits (KeyLimits): `inputTpm` / `outputTpm` are left out when unset. */
export interface TenantLimits {
  rpm: number | null;
  tpm: number | null;
  inputTpm?: number | null;
  outputTpm?: number | null;
  maxConcurrency: number | null;
}

/**
 * A spending limit in USD (decimal strings) for a tenant or a key, per UTC month and/or per UTC day
 * (at least one). Budgets set before daily amounts existed have `monthlyUsd` only. `webhook` is left out
 * when none is configured.
 */
export interface TenantBudget {
  monthlyUsd?: string;
  dailyUsd?: string;
  /** Percentage at which BudgetThresholdCrossed is recorded (soft alert); 100% is recorded too. */
  softPct: number;
  /** What happens at 100%: reject with 402, or only alert. */
  enforcement: 'hard' | 'soft';
  /** Called (HMAC-signed, with retries) when a threshold is crossed. */
  webhook?: BudgetWebhook;
}

export interface BudgetWebhook {
  url: string;
  /** Secret reference (env:NAME or file:PATH) of the HMAC-SHA256 signing key. */
  secret: string;
  /**
   * The URL may reach loopback, private and link-local addresses (never metadata). Left out when false,
   * so webhooks recorded before it existed read as not allowed.
   */
  allowPrivateNetwork?: boolean;
}

export type TenantCreated = DomainEvent<'TenantCreated', { tenantId: string; name: string }>;
export type TenantLimitsSet = DomainEvent<'TenantLimitsSet', { tenantId: string; limits: TenantLimits }>;
export type TenantBudgetSet = DomainEvent<'TenantBudgetSet', { tenantId: string; budget: TenantBudget | null }>;
export type TenantSuspended = DomainEvent<'TenantSuspended', { tenantId: string; reason: string | null }>;
export type TenantReinstated = DomainEvent<'TenantReinstated', { tenantId: string }>;
/**
 * The content policy (events/content-policy-events.ts) attached to the tenant, or none (null). Its own
 * event, like limits and budget: tenants created before policies existed have none.
 */
export type TenantContentPolicySet = DomainEvent<'TenantContentPolicySet', { tenantId: string; policyId: string | null }>;
/**
 * Recorded once per threshold per period (`month:2026-12`, `day:2026-12-01`). `keyId` is set for a
 * key's own budget and absent for the tenant's.
 */
export type BudgetThresholdCrossed = DomainEvent<
  'BudgetThresholdCrossed',
  { tenantId: string; keyId?: string; period: string; pct: number; spentUsd: string; budgetUsd: string }
>;

/** The outcome of a threshold's webhook: delivered, or given up after its attempts. Never carries the signature. */
export type BudgetAlertDelivered = DomainEvent<
  'BudgetAlertDelivered',
  { tenantId: string; keyId?: string; period: string; pct: number; delivered: boolean; attempts: number; httpStatus: number | null }
>;

export type TenantEvent =
  | TenantCreated | TenantLimitsSet | TenantBudgetSet | TenantSuspended | TenantReinstated | BudgetThresholdCrossed | BudgetAlertDelivered
  | TenantContentPolicySet;
export const TENANT_EVENT_TYPES = [
  'TenantCreated', 'TenantLimitsSet', 'TenantBudgetSet', 'TenantSuspended', 'TenantReinstated', 'BudgetThresholdCrossed', 'BudgetAlertDelivered',
  'TenantContentPolicySet',
] as const;

/** The key under which a threshold is remembered: the tenant's budget as before, a key's budget with its id. */
export function thresholdId(data: { keyId?: string; period: string; pct: number }): string {
  return data.keyId ? `key:${data.keyId}:${data.period}:${data.pct}` : `${data.period}:${data.pct}`;
}

export const tenantStream = (tenantId: string) => `tenant-${tenantId}`;
