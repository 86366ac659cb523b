import { PGlite, types } from '@electric-sql/pglite';
import { ERROR_FIELDS, type SerializedDatabaseError } from './pglite-thread-protocol.js';

/**
 * The engine's buffer pool. PostgreSQL zero-fills its shared buffers at start and PGlite's WebAssembly memory
 * never shrinks, so the pool is resident from the first second: PostgreSQL's default of 128 MB made the
 * embedded gateway 130 MB larger than 16 MB did. The data directory's files sit in the operating system's page
 * cache behind it. Measured with 1,000 concurrent slow streams (bench, three alternating rounds): peak RSS
 * 700–744 MB at 128 MB against 529–586 MB at 32 MB, throughput at c=32 within the rounds' spread.
 */
export const EMBEDDED_SHARED_BUFFERS = '32MB';

/** Opens PGlite on `dataDir` (null = in memory), creating the database there if it holds none, with the stores' settings. */
export async function openEngine(dataDir: string | null): Promise<PGlite> {
  const pg = await PGlite.create({
    dataDir: dataDir ?? undefined,
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
  return pg;
}

/**
 * The codes of Emscripten's file layer (its own numbering, not Linux's) that a data directory meets:
 * PGlite throws its `ErrnoError`, which is no `Error` and carries no message, only the number.
 */
const FILE_ERRORS: Record<number, string> = {
  2: 'EACCES: permission denied', 20: 'EEXIST: file exists', 31: 'EISDIR: is a directory', 44: 'ENOENT: no such file or directory',
  51: 'ENOSPC: no space left on device', 54: 'ENOTDIR: not a directory', 63: 'EPERM: operation not permitted', 69: 'EROFS: read-only file system',
};

/** Every field of PostgreSQL's error report that callers read (the SQLSTATE above all), as plain data. */
export function serializeError(error: unknown): SerializedDatabaseError {
  const errno = typeof error === 'object' && error !== null ? (error as { errno?: unknown }).errno : undefined;
  if (!(error instanceof Error) && typeof errno === 'number') {
    return { message: `the embedded database's files: ${FILE_ERRORS[errno] ?? `file system error ${errno}`}` };
  }
  if (!(error instanceof Error)) return { message: String(error) };
  const fields = error as Error & Record<string, unknown>;
  const serialized: SerializedDatabaseError = { message: error.message };
  for (const key of ERROR_FIELDS) {
    if (typeof fields[key] === 'string') serialized[key] = fields[key] as string;
  }
  return serialized;
}
