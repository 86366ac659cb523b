import { readEnvironment } from '../../config/environment.js';
import { openPlatform } from '../../platform.js';

export async function projectionsStatus(): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    await platform.runner.start();
    const head = await platform.store.headPosition();
    // A checkpoint is a (transaction, position) pair in the read order; show the last event it covers.
    const checkpoints = await platform.database.query<{ name: string; global_position: string | null; updated_at: Date }>(
      `SELECT c.name, c.updated_at,
              (SELECT e.global_position::text FROM events e
                WHERE (e.transaction_id, e.global_position) <= (c.transaction_id, c.global_position)
                ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1) AS global_position
       FROM projection_checkpoints c ORDER BY c.name`,
    );
    process.stdout.write(`event log head: global position ${head}\n`);
    process.stdout.write(`${'projection'.padEnd(20)} ${'kind'.padEnd(10)} position\n`);
    for (const status of platform.runner.status()) {
      if (status.kind === 'in-memory') {
        process.stdout.write(`${status.name.padEnd(20)} ${'per-node'.padEnd(10)} ${status.lastGlobalPosition} (rebuilt in memory at start)\n`);
      } else {
        const stored = checkpoints.find((c) => c.name === status.name);
        process.stdout.write(
          `${status.name.padEnd(20)} ${'singleton'.padEnd(10)} ${stored ? `${stored.global_position ?? 0} (checkpoint moved ${new Date(stored.updated_at).toISOString()})` : 'not started'}\n`,
        );
      }
    }
    return 0;
  } finally {
    await platform.close();
  }
}

export async function projectionsRebuild(name: string): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: true });
  try {
    const known = platform.runner.status().filter((s) => s.kind === 'durable').map((s) => s.name);
    if (!known.includes(name)) {
      process.stderr.write(`Unknown projection '${name}'. Rebuildable: ${known.join(', ')} (per-node projections rebuild at every start).\n`);
      return 2;
    }
    const head = await platform.store.headPosition();
    process.stderr.write(`rebuilding ${name} from position 0 (log head ${head})…\n`);
    await platform.runner.rebuild(name);
    const status = platform.runner.status().find((s) => s.name === name)!;
    if (!status.leaseHeld) {
      // Another node holds the lease: it sees the reset checkpoint and replays; wait until its checkpoint
      // covers the event that was the head when the rebuild began (compared as log positions, xid8 first).
      process.stderr.write(`a running node holds the ${name} lease; waiting for it to replay…\n`);
      for (let waited = 0; ; waited += 500) {
        const rows = await platform.database.query<{ covered: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM projection_checkpoints c, events e
                           WHERE c.name = $1 AND e.global_position = $2
                             AND (c.transaction_id, c.global_position) >= (e.transaction_id, e.global_position)) AS covered`,
          [name, head],
        );
        if (rows[0]?.covered || head === 0) break;
        if (waited >= 120_000) {
          process.stderr.write(`the node holding the ${name} lease did not finish replaying within 120 s\n`);
          return 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    process.stdout.write(`Rebuilt ${name}.\n`);
    return 0;
  } finally {
    await platform.close();
  }
}
