import type { RecordedEvent, SqlExecutor } from '../../src/kernel/index.js';
import { AuditChainProjection } from '../../projections/audit-chain/audit-chain.projection.js';
import { GENESIS_HASH, canonicalEvent, chainHash } from '../../projections/audit-chain/canonical-event.js';

/**
 * The audit chain's page is chained before its transaction opens (`prepare`), in slices that let the
 * event loop turn. These tests drive the projection against a chain table of their own that does what
 * the real insert's WHERE clause does: it appends only after the head the statement names.
 */
interface Row {
  sequence: number;
  globalPosition: number;
  prevHash: string;
  hash: string;
}

class ChainTable implements SqlExecutor {
  readonly rows: Row[] = [];
  readonly statements: string[] = [];

  async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    if (sql.includes('INSERT INTO audit_chain')) {
      this.statements.push('insert');
      const [positions, , , prevHashes, hashes, headSequence, headHash] = params as [string, string, string, string, string, number, string];
      const head = this.rows.at(-1);
      if ((head?.sequence ?? 0) !== headSequence || (head?.hash ?? headHash) !== headHash) return [];
      const at = positions.split(',');
      const prev = prevHashes.split(',');
      const next = hashes.split(',');
      const added = at.map((position, i) => ({ sequence: headSequence + i + 1, globalPosition: Number(position), prevHash: prev[i], hash: next[i] }));
      this.rows.push(...added);
      return added.map((row) => ({ sequence: row.sequence })) as T[];
    }
    if (sql.includes('FROM audit_chain c ORDER BY c.sequence DESC LIMIT 1')) {
      this.statements.push('head');
      const head = this.rows.at(-1);
      return (head ? [{ head: String(head.sequence), hash: head.hash }] : []) as T[];
    }
    throw new Error(`unexpected statement: ${sql}`);
  }

  /** Moves the head as another writer would (a row the projection did not write). */
  appendForeign(globalPosition: number): void {
    const head = this.rows.at(-1);
    this.rows.push({ sequence: (head?.sequence ?? 0) + 1, globalPosition, prevHash: head?.hash ?? GENESIS_HASH, hash: 'f'.repeat(64) });
  }
}

function page(from: number, count: number): RecordedEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const position = from + i;
    return {
      globalPosition: position,
      transactionId: 1000n + BigInt(position),
      streamId: `request-${position}`,
      streamVersion: 1,
      eventId: `01939a4e-0000-7000-8000-${String(position).padStart(12, '0')}`,
      type: 'RequestCompleted',
      schemaVersion: 1,
      data: { requestId: `r${position}`, status: 'success', costUsd: '0.000123' },
      metadata: { actor: 'gateway', correlationId: `r${position}` },
      recordedAt: new Date('2026-12-03T09:00:00Z'),
      stored: { schemaVersion: 1, data: { requestId: `r${position}`, status: 'success', costUsd: '0.000123' }, recordedAt: '2026-12-03T09:00:00.000001Z' },
    } as RecordedEvent;
  });
}

/** Every row's hash recomputed from the events and the row before it, as an auditor would. */
function expectChainOf(table: ChainTable, events: readonly RecordedEvent[]): void {
  const byPosition = new Map(events.map((e) => [e.globalPosition, e]));
  let prev = GENESIS_HASH;
  table.rows.forEach((row, i) => {
    expect(row.sequence).toBe(i + 1);
    expect(row.prevHash).toBe(prev);
    const event = byPosition.get(row.globalPosition);
    if (event) {
      const stored = {
        globalPosition: event.globalPosition, transactionId: event.transactionId.toString(), streamId: event.streamId, streamVersion: event.streamVersion,
        eventId: event.eventId, type: event.type, schemaVersion: event.stored!.schemaVersion, data: event.stored!.data, metadata: event.metadata, recordedAt: event.stored!.recordedAt,
      };
      expect(row.hash).toBe(chainHash(prev, canonicalEvent(stored)));
    }
    prev = row.hash;
  });
}

describe('audit chain: a page chained before its transaction', () => {
  test('after a batch of its own, the next page is chained by prepare and handle only inserts it', async () => {
    const table = new ChainTable();
    const projection = new AuditChainProjection(null, 0);
    const first = page(1, 40);
    await projection.prepare(first); // the head is not known yet: nothing can be chained ahead
    await projection.handle(table, first);
    expect(table.statements).toEqual(['head', 'insert']);

    const second = page(41, 200);
    await projection.prepare(second);
    table.statements.length = 0;
    // Chaining 200 events again would take turns of the event loop (see the last test): handle takes none.
    let turned = false;
    setImmediate(() => (turned = true));
    await projection.handle(table, second);
    expect(turned).toBe(false);
    expect(table.statements).toEqual(['insert']);
    expect(table.rows).toHaveLength(240);
    expectChainOf(table, [...first, ...second]);
  });

  test('entries prepared for another page, or from a head that is no longer believed, are not used', async () => {
    const table = new ChainTable();
    const projection = new AuditChainProjection(null, 0);
    await projection.handle(table, page(1, 10));

    // prepared for one array, handed another with other events: chained again from the events handed
    await projection.prepare(page(11, 10));
    const other = page(11, 12);
    await projection.handle(table, other);
    expect(table.rows).toHaveLength(22);

    // prepared, then the checkpoint was reloaded (resume): the head is read again before chaining
    await projection.prepare(page(23, 5));
    await projection.resume();
    table.statements.length = 0;
    const after = page(23, 5);
    await projection.handle(table, after);
    expect(table.statements).toEqual(['head', 'insert']);
    expectChainOf(table, [...page(1, 10), ...other, ...after]);
  });

  test('a head moved by another writer after prepare: the insert is refused and the page chained after the new head', async () => {
    const table = new ChainTable();
    const projection = new AuditChainProjection(null, 0);
    await projection.handle(table, page(1, 5));
    const next = page(7, 5);
    await projection.prepare(next);
    table.appendForeign(6);
    table.statements.length = 0;
    await projection.handle(table, next);
    expect(table.statements).toEqual(['insert', 'head', 'insert']);
    expect(table.rows.map((row) => row.globalPosition)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(table.rows[6].prevHash).toBe('f'.repeat(64));
    expectChainOf(table, [...page(1, 5), ...next]);
  });

  test('a long page lets the event loop turn while it is chained', async () => {
    const table = new ChainTable();
    const projection = new AuditChainProjection(null, 0);
    await projection.handle(table, page(1, 1));
    let turned = false;
    setImmediate(() => (turned = true));
    await projection.prepare(page(2, 500));
    // Chained in one go, prepare would have resolved within this turn, before the immediate ran.
    expect(turned).toBe(true);
  });
});
