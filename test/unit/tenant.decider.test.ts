import type { TenantBudget, TenantEvent, TenantLimits } from '../../events/tenant-events.js';
import { tenantDecider } from '../../modules/access/tenant/tenant.decider.js';
import { deciderSpec } from '../support/decider-spec.js';

const spec = deciderSpec(tenantDecider);
const tenantId = 'acme';

const created: TenantEvent = { type: 'TenantCreated', data: { tenantId, name: 'Acme Corp' } };
const limits: TenantLimits = { rpm: 600, tpm: 200_000, maxConcurrency: null };
const budget: TenantBudget = { monthlyUsd: '500', softPct: 80, enforcement: 'hard' };
const suspended: TenantEvent = { type: 'TenantSuspended', data: { tenantId, reason: 'unpaid invoice' } };
const crossed: TenantEvent = { type: 'BudgetThresholdCrossed', data: { tenantId, period: '2026-01', pct: 80, spentUsd: '400.1', budgetUsd: '500' } };

describe('tenant aggregate', () => {
  describe('CreateTenant', () => {
    test('a new tenant is created', () => {
      spec.given([]).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp' }).then([created]);
    });
    test('creating it again with the same name changes nothing', () => {
      spec.given([created]).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp' }).thenNothing();
    });
    test('a duplicate id with another name is refused', () => {
      spec.given([created]).when({ type: 'CreateTenant', tenantId, name: 'Acme Inc' }).thenThrows('tenant_exists', 422);
    });
    test('an id with invalid characters is refused', () => {
      spec.given([]).when({ type: 'CreateTenant', tenantId: 'acme/../x', name: 'x' }).thenThrows('invalid_tenant', 422);
    });
    test('with limits and a budget: the three events apply appends for the same tenant, in one decision', () => {
      spec.given([]).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp', limits, budget }).then([
        created, { type: 'TenantLimitsSet', data: { tenantId, limits } }, { type: 'TenantBudgetSet', data: { tenantId, budget } },
      ]);
    });
    test('no limits and no budget given, or none set: only the creation (as apply, which sets neither then)', () => {
      spec.given([]).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp', limits: { rpm: null, tpm: null, maxConcurrency: null }, budget: null }).then([created]);
    });
    test('a bad limit or budget refuses the creation too: nothing is appended', () => {
      spec.given([]).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp', limits: { ...limits, rpm: 0 } }).thenThrows('invalid_limits', 422);
      spec.given([]).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp', budget: { ...budget, softPct: 0 } }).thenThrows('invalid_budget', 422);
    });
    test('the same creation with limits and budget again changes nothing; other limits or another budget are refused', () => {
      const existing: TenantEvent[] = [created, { type: 'TenantLimitsSet', data: { tenantId, limits } }, { type: 'TenantBudgetSet', data: { tenantId, budget } }];
      spec.given(existing).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp', limits, budget }).thenNothing();
      spec.given(existing).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp' }).thenNothing();
      spec.given(existing).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp', budget: { ...budget, monthlyUsd: '600' } }).thenThrows('tenant_exists', 422);
      spec.given(existing).when({ type: 'CreateTenant', tenantId, name: 'Acme Corp', limits: { ...limits, rpm: 1 } }).thenThrows('tenant_exists', 422);
    });
  });

  describe('SetTenantLimits', () => {
    test('limits are recorded', () => {
      spec.given([created]).when({ type: 'SetTenantLimits', tenantId, limits }).then([{ type: 'TenantLimitsSet', data: { tenantId, limits } }]);
    });
    test('the same limits again change nothing', () => {
      spec.given([created, { type: 'TenantLimitsSet', data: { tenantId, limits } }]).when({ type: 'SetTenantLimits', tenantId, limits }).thenNothing();
    });
    test('a zero or fractional limit is refused', () => {
      spec.given([created]).when({ type: 'SetTenantLimits', tenantId, limits: { ...limits, rpm: 0 } }).thenThrows('invalid_limits', 422);
      spec.given([created]).when({ type: 'SetTenantLimits', tenantId, limits: { ...limits, tpm: 1.5 } }).thenThrows('invalid_limits', 422);
    });
    test('limits of an unknown tenant are refused', () => {
      spec.given([]).when({ type: 'SetTenantLimits', tenantId, limits }).thenThrows('tenant_not_found', 404);
    });
  });

  describe('SetTenantBudget', () => {
    test('a budget is recorded, and can be cleared again', () => {
      spec.given([created]).when({ type: 'SetTenantBudget', tenantId, budget }).then([{ type: 'TenantBudgetSet', data: { tenantId, budget } }]);
      spec.given([created, { type: 'TenantBudgetSet', data: { tenantId, budget } }]).when({ type: 'SetTenantBudget', tenantId, budget: null })
        .then([{ type: 'TenantBudgetSet', data: { tenantId, budget: null } }]);
    });
    test('the same budget again changes nothing', () => {
      spec.given([created, { type: 'TenantBudgetSet', data: { tenantId, budget } }]).when({ type: 'SetTenantBudget', tenantId, budget }).thenNothing();
    });
    const invalid: Array<[string, Partial<TenantBudget>]> = [
      ['a zero budget', { monthlyUsd: '0' }],
      ['a float amount', { monthlyUsd: 'five hundred' }],
      ['a soft threshold above 100%', { softPct: 120 }],
      ['an unknown enforcement', { enforcement: 'maybe' as 'hard' }],
    ];
    test.each(invalid)('refuses %s', (_name, overrides) => {
      spec.given([created]).when({ type: 'SetTenantBudget', tenantId, budget: { ...budget, ...overrides } }).thenThrows('invalid_budget', 422);
    });
    test('a budget of an unknown tenant is refused', () => {
      spec.given([]).when({ type: 'SetTenantBudget', tenantId, budget }).thenThrows('tenant_not_found', 404);
    });
  });

  describe('SuspendTenant and ReinstateTenant', () => {
    test('an active tenant is suspended', () => {
      spec.given([created]).when({ type: 'SuspendTenant', tenantId, reason: 'unpaid invoice' }).then([suspended]);
    });
    test('suspending a suspended tenant is refused', () => {
      spec.given([created, suspended]).when({ type: 'SuspendTenant', tenantId, reason: null }).thenThrows('tenant_already_suspended', 409);
    });
    test('suspending an unknown tenant is refused', () => {
      spec.given([]).when({ type: 'SuspendTenant', tenantId, reason: null }).thenThrows('tenant_not_found', 404);
    });
    test('a suspended tenant is reinstated; an active one cannot be', () => {
      spec.given([created, suspended]).when({ type: 'ReinstateTenant', tenantId }).then([{ type: 'TenantReinstated', data: { tenantId } }]);
      spec.given([created]).when({ type: 'ReinstateTenant', tenantId }).thenThrows('tenant_not_suspended', 409);
    });
    test('reinstating an unknown tenant is refused', () => {
      spec.given([]).when({ type: 'ReinstateTenant', tenantId }).thenThrows('tenant_not_found', 404);
    });
    test('limits and budget can still be changed while suspended', () => {
      spec.given([created, suspended]).when({ type: 'SetTenantLimits', tenantId, limits }).then([{ type: 'TenantLimitsSet', data: { tenantId, limits } }]);
    });
  });

  describe('RecordBudgetThreshold', () => {
    const record = { type: 'RecordBudgetThreshold' as const, tenantId, period: '2026-01', pct: 80, spentUsd: '400.1', budgetUsd: '500' };
    test('a crossed threshold is recorded once per period', () => {
      spec.given([created]).when(record).then([crossed]);
      spec.given([created, crossed]).when(record).thenNothing();
      spec.given([created, crossed]).when({ ...record, period: '2026-02' }).then([{ ...crossed, data: { ...crossed.data, period: '2026-02' } } as TenantEvent]);
    });
    test('a threshold of an unknown tenant is refused', () => {
      spec.given([]).when(record).thenThrows('tenant_not_found', 404);
    });
  });
});
