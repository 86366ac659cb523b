import { EventStore1764460800000 } from './1764460800000-event-store.js';
import { CostLedger1764460800001 } from './1764460800001-cost-ledger.js';
import { AdminTokens1764460800020 } from './1764460800020-admin-tokens.js';
import { AuditChain1764460800120 } from './1764460800120-audit-chain.js';
import { EventsPositionIndex1764460800121 } from './1764460800121-events-position-index.js';

/** Every PostgreSQL migration, in order. TypeORM's runner applies the ones not yet recorded. */
export const postgresMigrations = [
  EventStore1764460800000, CostLedger1764460800001, AdminTokens1764460800020, AuditChain1764460800120,
  EventsPositionIndex1764460800121,
];
