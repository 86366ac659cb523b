import { upcasters } from '../../events/upcasters.js';
import { AuditChainProjection } from '../../projections/audit-chain/index.js';
import { CostLedgerProjection } from '../../projections/cost-ledger/index.js';
import { RequestSummariesProjection } from '../../projections/request-summaries/index.js';
import type { Database } from '../kernel/database/database.js';
import { SqlEventStore } from '../kernel/event-store/sql-event-store.js';
import { ProjectionRunner } from '../kernel/projections/projection-runner.js';
import type { ControlPlaneState } from '../../projections/control-plane/index.js';
import { ControlPlaneFold } from './control-plane-fold.js';

/**
 * How long the read models may stay behind the log's head without the catch-up giving up: only a
 * transaction held open on the server stops them (the runner names it), never the log's size.
 */
const CATCH_UP_LIMIT_MS = 24 * 3600_000;

/** Events per projection transaction: larger pages than a serving node's, since nothing else waits here. */
const PAGE = 2000;

/**
 * Brings the durable read models that live in the database — the cost ledger with tenant spend, the request
 * summaries and the audit chain — up to the head of its log, from their own checkpoints (from position 0 in a new target: that
 * is the rebuild), and returns the control plane folded from the log (what the routing snapshot and the key
 * index of a node starting on it would hold). The chain is built by an instance that signs nothing, as a rebuild's is: the signed
 * checkpoints copied from the source attest the chain, and the rebuilt chain must reproduce them. ClickHouse
 * analytics is left to the gateway: its tables remember the positions they hold, and positions are kept.
 */
export async function catchUpReadModels(database: Database, onProgress: (position: number) => void): Promise<ControlPlaneState> {
  const store = new SqlEventStore(database, upcasters.upcast);
  const runner = new ProjectionRunner(store, database, { pollIntervalMs: 60_000, listen: false, batchSize: PAGE, runDurable: true });
  runner.addDurable(new CostLedgerProjection());
  runner.addDurable(new RequestSummariesProjection());
  runner.addDurable(new AuditChainProjection(null, 0));
  const controlPlane = new ControlPlaneFold();
  runner.addInMemory(controlPlane);
  let following = true;
  const follow = (async () => {
    while (following) {
      onProgress(Math.max(...runner.status().map((status) => status.lastGlobalPosition)));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  try {
    await runner.catchUp(undefined, CATCH_UP_LIMIT_MS);
    return controlPlane.state;
  } finally {
    following = false;
    await follow;
    await runner.stop();
  }
}
