import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { openEngine, serializeError } from './pglite-engine.js';
import type { EmbeddedCall, EmbeddedReply, EmbeddedResult, EmbeddedThreadOptions } from './pglite-thread-protocol.js';

/**
 * The embedded PostgreSQL engine on a thread of its own. PGlite runs PostgreSQL compiled to WebAssembly
 * synchronously on the thread that calls it; on the gateway's thread every statement (the append, each
 * projection's batch, a checkpoint) stopped the event loop for as long as it ran. Here it runs beside the
 * loop, and the gateway's thread only sends statements and receives rows (`pglite-thread.ts`).
 *
 * Calls run in the order they arrive (PGlite queues them itself); the caller keeps transactions whole
 * by holding its own session mutex from BEGIN to COMMIT, exactly as with PGlite in process.
 */
const port = parentPort;
if (!port) throw new Error('pglite-worker must run as a worker thread');
const options = workerData as EmbeddedThreadOptions;

const listeners = new Map<number, () => Promise<void>>();

function reply(message: EmbeddedReply): void {
  port!.postMessage(message);
}

function result(raw: { rows: Record<string, unknown>[]; affectedRows?: number }): EmbeddedResult {
  return { rows: raw.rows, affectedRows: raw.affectedRows };
}

async function main(): Promise<void> {
  let pg: PGlite;
  try {
    pg = await openEngine(options.dataDir);
  } catch (error) {
    reply({ kind: 'opened', error: serializeError(error) });
    return;
  }
  reply({ kind: 'opened' });

  port!.on('message', (call: EmbeddedCall) => {
    void handle(pg, call);
  });
}

async function handle(pg: PGlite, call: EmbeddedCall): Promise<void> {
  try {
    switch (call.op) {
      case 'query': {
        if (call.begin) await pg.exec('BEGIN');
        const raw = await pg.query<Record<string, unknown>>(call.sql, call.params as unknown[]);
        reply({ kind: 'result', id: call.id, results: [result(raw)] });
        return;
      }
      case 'exec': {
        if (call.begin) await pg.exec('BEGIN');
        const raws = await pg.exec(call.sql);
        reply({ kind: 'result', id: call.id, results: raws.map((raw) => result(raw as { rows: Record<string, unknown>[]; affectedRows?: number })) });
        return;
      }
      case 'copy': {
        if (call.begin) await pg.exec('BEGIN');
        const raw = await pg.query<Record<string, unknown>>(call.sql, [], { blob: new Blob([call.data]) });
        reply({ kind: 'result', id: call.id, results: [result(raw)] });
        return;
      }
      case 'listen': {
        const { subscription } = call;
        const unsubscribe = await pg.listen(call.channel, (payload) => reply({ kind: 'notification', subscription, payload }));
        listeners.set(subscription, () => unsubscribe());
        reply({ kind: 'result', id: call.id, results: [] });
        return;
      }
      case 'unlisten': {
        const unsubscribe = listeners.get(call.subscription);
        listeners.delete(call.subscription);
        await unsubscribe?.();
        reply({ kind: 'result', id: call.id, results: [] });
        return;
      }
      case 'close': {
        await pg.close();
        reply({ kind: 'result', id: call.id, results: [] });
        port!.close();
        return;
      }
    }
  } catch (error) {
    reply({ kind: 'error', id: call.id, error: serializeError(error) });
  }
}

void main();
