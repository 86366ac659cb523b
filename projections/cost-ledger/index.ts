/** The cost ledger's public surface: one row per billable attempt, and the tenants' running spend it keeps. */
export { CostLedgerEntry } from './cost-ledger-entry.entity.js';
export { CostLedgerProjection, isBillable } from './cost-ledger.projection.js';
