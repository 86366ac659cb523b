import { Decimal } from 'decimal.js';
import { NO_LIMITS, type TenantBudget, type TenantEvent, tenantFold, type TenantLimits, type TenantState, thresholdId } from '../../../events/index.js';
import { assertNever, type Decider, DEFINITION_ID, DomainError, sameJson } from '../../../src/kernel/index.js';
import { webhookUrlProblem } from './webhook-url-policy.js';

export type TenantCommand =
  /** `limits`, `budget` and `contentPolicy`, when given, are set with the creation in one append (the admin API's one POST). */
  | { type: 'CreateTenant'; tenantId: string; name: string; limits?: TenantLimits; budget?: TenantBudget | null; contentPolicy?: string | null }
  | { type: 'SetTenantLimits'; tenantId: string; limits: TenantLimits }
  | { type: 'SetTenantBudget'; tenantId: string; budget: TenantBudget | null }
  /** Attaches a content policy (by id) to the tenant, or detaches it (null). Whether the policy is live is the publication guard's check. */
  | { type: 'SetTenantContentPolicy'; tenantId: string; policyId: string | null }
  | { type: 'SuspendTenant'; tenantId: string; reason: string | null }
  | { type: 'ReinstateTenant'; tenantId: string }
  | { type: 'RecordBudgetThreshold'; tenantId: string; keyId?: string; period: string; pct: number; spentUsd: string; budgetUsd: string }
  | { type: 'RecordBudgetAlert'; tenantId: string; keyId?: string; period: string; pct: number; delivered: boolean; attempts: number; httpStatus: number | null };

export const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** What a budget gets for what its owner left out: the admin API and the configuration file both apply these. */
export const BUDGET_DEFAULTS = { softPct: 80, enforcement: 'hard' } as const satisfies Pick<TenantBudget, 'softPct' | 'enforcement'>;

export const tenantDecider: Decider<TenantCommand, TenantEvent, TenantState> = {
  initialState: tenantFold.initialState,
  evolve: tenantFold.evolve,

  decide(command, state) {
    const id = command.tenantId;
    switch (command.type) {
      case 'CreateTenant': {
        if (!TENANT_ID.test(id)) throw new DomainError('invalid_tenant', 'tenant ids use letters, digits, ".", "_" and "-" (at most 64)', 422);
        const limits = command.limits ?? NO_LIMITS;
        const budget = command.budget ?? null;
        const problem = limitsProblem(limits) ?? (budget ? budgetProblem(budget) : null)
          ?? (command.contentPolicy && !DEFINITION_ID.test(command.contentPolicy) ? 'contentPolicy must be a content policy id' : null);
        if (problem) throw new DomainError(problem.startsWith('limits.') ? 'invalid_limits' : 'invalid_budget', problem, 422);
        if (state.status !== 'absent') {
          // The same creation again changes nothing; anything else is a change, made by its own endpoint.
          if (
            state.name === command.name && (command.limits === undefined || sameJson(state.limits, limits)) && (command.budget === undefined || sameJson(state.budget, budget))
            && (command.contentPolicy === undefined || (state.contentPolicy ?? null) === command.contentPolicy)
          ) return [];
          throw new DomainError('tenant_exists', `Tenant ${id} already exists`, 422);
        }
        // The events apply appends for the same tenant declared in the file: limits and budget only when set.
        return [
          { type: 'TenantCreated', data: { tenantId: id, name: command.name } },
          ...(sameJson(limits, NO_LIMITS) ? [] : [{ type: 'TenantLimitsSet' as const, data: { tenantId: id, limits } }]),
          ...(budget ? [{ type: 'TenantBudgetSet' as const, data: { tenantId: id, budget } }] : []),
          ...(command.contentPolicy ? [{ type: 'TenantContentPolicySet' as const, data: { tenantId: id, policyId: command.contentPolicy } }] : []),
        ];
      }
      case 'SetTenantLimits': {
        const current = requireTenant(state, id);
        const problem = limitsProblem(command.limits);
        if (problem) throw new DomainError('invalid_limits', problem, 422);
        if (sameJson(current.limits, command.limits)) return [];
        return [{ type: 'TenantLimitsSet', data: { tenantId: id, limits: command.limits } }];
      }
      case 'SetTenantBudget': {
        const current = requireTenant(state, id);
        const problem = command.budget ? budgetProblem(command.budget) : null;
        if (problem) throw new DomainError('invalid_budget', problem, 422);
        if (sameJson(current.budget, command.budget)) return [];
        return [{ type: 'TenantBudgetSet', data: { tenantId: id, budget: command.budget } }];
      }
      case 'SetTenantContentPolicy': {
        const current = requireTenant(state, id);
        if (command.policyId !== null && !DEFINITION_ID.test(command.policyId)) throw new DomainError('invalid_content_policy', 'contentPolicy must be a content policy id', 422);
        if ((current.contentPolicy ?? null) === command.policyId) return [];
        return [{ type: 'TenantContentPolicySet', data: { tenantId: id, policyId: command.policyId } }];
      }
      case 'SuspendTenant':
        if (requireTenant(state, id).status === 'suspended') throw new DomainError('tenant_already_suspended', `Tenant ${id} is already suspended`);
        return [{ type: 'TenantSuspended', data: { tenantId: id, reason: command.reason } }];
      case 'ReinstateTenant':
        if (requireTenant(state, id).status === 'active') throw new DomainError('tenant_not_suspended', `Tenant ${id} is not suspended`);
        return [{ type: 'TenantReinstated', data: { tenantId: id } }];
      case 'RecordBudgetThreshold': {
        const current = requireTenant(state, id);
        if (current.thresholdsCrossed.includes(thresholdId(command))) return [];
        const { type: _type, ...data } = command;
        return [{ type: 'BudgetThresholdCrossed', data }];
      }
      case 'RecordBudgetAlert': {
        requireTenant(state, id);
        const { type: _type, ...data } = command;
        return [{ type: 'BudgetAlertDelivered', data }];
      }
      default:
        return assertNever(command);
    }
  },
};

function requireTenant(state: TenantState, id: string) {
  if (state.status === 'absent') throw new DomainError('tenant_not_found', `Tenant ${id} does not exist`, 404);
  return state;
}

export function limitsProblem(limits: TenantLimits): string | null {
  for (const [name, value] of Object.entries(limits)) {
    if (value !== null && (!Number.isInteger(value) || value <= 0)) return `limits.${name} must be a positive integer or null`;
  }
  return null;
}

export function budgetProblem(budget: TenantBudget): string | null {
  if (budget.monthlyUsd === undefined && budget.dailyUsd === undefined) return 'a budget needs monthlyUsd or dailyUsd (or both)';
  for (const name of ['monthlyUsd', 'dailyUsd'] as const) {
    const amount = budget[name];
    if (amount !== undefined && (!/^\d+(\.\d+)?$/.test(amount) || new Decimal(amount).lte(0))) return `budget.${name} must be a positive decimal string`;
  }
  const hookProblem = budget.webhook ? webhookUrlProblem(budget.webhook.url, budget.webhook.allowPrivateNetwork === true) : null;
  if (hookProblem) return hookProblem;
  if (budget.webhook && !/^(env|file):.+/.test(budget.webhook.secret)) return 'budget.webhook.secret must be a secret reference (env:NAME or file:PATH)';
  if (!Number.isInteger(budget.softPct) || budget.softPct < 1 || budget.softPct > 100) return 'budget.softPct must be an integer from 1 to 100';
  if (budget.enforcement !== 'hard' && budget.enforcement !== 'soft') return 'budget.enforcement must be hard or soft';
  return null;
}
