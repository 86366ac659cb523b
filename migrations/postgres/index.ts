import { EventStore1764460800000 } from './1764460800000-event-store.js';
import { CostLedger1764460800001 } from './1764460800001-cost-ledger.js';
import { AdminTokens1764460800020 } from './1764460800020-admin-tokens.js';
import { CheckpointXid81764547200000 } from './1764547200000-checkpoint-xid8.js';
import { AuditChain1764547200120 } from './1764547200120-audit-chain.js';
import { EventsPositionIndex1764547200121 } from './1764547200121-events-position-index.js';
import { LedgerCacheSavings1764633600300 } from './1764633600300-ledger-cache-savings.js';
import { HexDigestChecks1764720000400 } from './1764720000400-hex-digest-checks.js';
import { LedgerWideAmounts1764806400320 } from './1764806400320-ledger-wide-amounts.js';
import { ProjectionHalts1764806400321 } from './1764806400321-projection-halts.js';
import { RequestSummaries1764979200500 } from './1764979200500-request-summaries.js';
import { RequestSummariesStatusIndex1764979200501 } from './1764979200501-request-summaries-status-index.js';

/** Every PostgreSQL migration, in order. TypeORM's runner applies the ones not yet recorded. */
export const postgresMigrations = [
  EventStore1764460800000, CostLedger1764460800001, AdminTokens1764460800020, CheckpointXid81764547200000,
  AuditChain1764547200120, EventsPositionIndex1764547200121, LedgerCacheSavings1764633600300,
  HexDigestChecks1764720000400, LedgerWideAmounts1764806400320, ProjectionHalts1764806400321, RequestSummaries1764979200500,
  RequestSummariesStatusIndex1764979200501,
];
