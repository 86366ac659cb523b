import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, types } from '@electric-sql/pglite';
import { EMBEDDED_SHARED_BUFFERS, ERROR_FIELDS, type EmbeddedCall, type EmbeddedReply, type EmbeddedResult, type EmbeddedThreadOptions, type SerializedDatabaseError } from './pglite-thread-protocol.js';

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

/** Every field of PostgreSQL's error report that callers read (the SQLSTATE above all), as plain data. */
function serializeError(error: unknown): SerializedDatabaseError {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields = error as Error & Record<string, unknown>;
  const serialized: SerializedDatabaseError = { message: error.message };
  for (const key of ERROR_FIELDS) {
    if (typeof fields[key] === 'string') serialized[key] = fields[key] as string;
  }
  return serialized;
}

async function main(): Promise<void> {
  let pg: PGlite;
  try {
    pg = await PGlite.create({
      dataDir: options.dataDir ?? undefined,
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
      // Match node-postgres: int8 and numeric arrive as strings, so money never passes through a float.
      parsers: { [types.INT8]: (value: string) => value },
      serializers: {
        [types.BOOL]: (value: unknown) => (value === true || value === 'true' || value === 1 ? 'TRUE' : 'FALSE'),
      },
    });
    // A new 16 MB WAL segment is otherwise zero-filled first, through Emscripten's file layer: a stall of
    // 50–120 ms every few thousand requests (the embedded store's P99). Pages are written as WAL fills them
    // either way; only a full disk now fails at the write rather than at creation.
    await pg.exec('SET wal_init_zero = off');
  } catch (error) {
    reply({ kind: 'opened', error: serializeError(error) });
    return;
  }
  if (options.createOnly) {
    try {
      await pg.close();
      reply({ kind: 'opened' });
    } catch (error) {
      reply({ kind: 'opened', error: serializeError(error) });
    }
    port!.close();
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
