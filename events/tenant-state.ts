import { assertNever, type StateFold } from '../src/kernel/index.js';
import { type TenantBudget, type TenantEvent, type TenantLimits, thresholdId } from './tenant-events.js';

/** A tenant as its events leave it: what access decides on and the key index folds. */
export type TenantState =
  | { status: 'absent' }
  | {
      status: 'active' | 'suspended';
      tenantId: string;
      name: string;
      limits: TenantLimits;
      budget: TenantBudget | null;
      /** `${period}:${pct}` of every threshold already recorded: each is recorded once per period. */
      thresholdsCrossed: string[];
      /** The content policy attached to the tenant; left out when none is. */
      contentPolicy?: string;
    };

/** A tenant's limits until some are set. */
export const NO_LIMITS: TenantLimits = { rpm: null, tpm: null, maxConcurrency: null };

export const tenantFold: StateFold<TenantEvent, TenantState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'TenantCreated':
        return { status: 'active', tenantId: event.data.tenantId, name: event.data.name, limits: NO_LIMITS, budget: null, thresholdsCrossed: [] };
      case 'TenantLimitsSet':
        return state.status === 'absent' ? state : { ...state, limits: event.data.limits };
      case 'TenantBudgetSet':
        return state.status === 'absent' ? state : { ...state, budget: event.data.budget };
      case 'TenantSuspended':
        return state.status === 'absent' ? state : { ...state, status: 'suspended' };
      case 'TenantReinstated':
        return state.status === 'absent' ? state : { ...state, status: 'active' };
      case 'BudgetThresholdCrossed':
        return state.status === 'absent'
          ? state
          : { ...state, thresholdsCrossed: [...state.thresholdsCrossed, thresholdId(event.data)] };
      case 'BudgetAlertDelivered':
        return state;
      case 'TenantContentPolicySet': {
        if (state.status === 'absent') return state;
        const { contentPolicy: _previous, ...rest } = state;
        return event.data.policyId === null ? rest : { ...rest, contentPolicy: event.data.policyId };
      }
      default:
        return assertNever(event);
    }
  },
};
