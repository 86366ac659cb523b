/** Tenant spend's public surface: running spend per tenant and UTC day or month, derived from the ledger rows. */
export { type SpendPeriod, TenantSpend } from './tenant-spend.entity.js';
export { periodStart } from './spend-period.js';
