/** The messages between the gateway's thread and the embedded database's (`pglite-worker.ts`). */

export interface EmbeddedThreadOptions {
  /** PGlite's data directory; null = in memory. */
  dataDir: string | null;
}

/**
 * `begin`: open a transaction first, on the engine's thread (a transaction's first statement carries it, which
 * saves the BEGIN a round trip of its own); should BEGIN fail, the statement is not run.
 */
export type EmbeddedCall =
  | { op: 'query'; id: number; sql: string; params: readonly unknown[]; begin: boolean }
  | { op: 'exec'; id: number; sql: string; begin: boolean }
  /** `COPY … FROM '/dev/blob'` with `data` as the blob it reads (PGlite's way of feeding COPY FROM STDIN). */
  | { op: 'copy'; id: number; sql: string; data: string; begin: boolean }
  | { op: 'listen'; id: number; channel: string; subscription: number }
  | { op: 'unlisten'; id: number; subscription: number }
  | { op: 'close'; id: number };

/** What callers use of a PGlite result: the rows, and how many rows a write touched. */
export interface EmbeddedResult {
  rows: Record<string, unknown>[];
  affectedRows?: number;
}

/** The fields of PostgreSQL's error report that cross threads beside the message (the SQLSTATE above all). */
export const ERROR_FIELDS = ['code', 'severity', 'detail', 'hint', 'position', 'where', 'schema', 'table', 'column', 'constraint', 'routine'] as const;

export type DatabaseErrorFields = Partial<Record<(typeof ERROR_FIELDS)[number], string>>;

/** A PostgreSQL error report as plain data: it crosses threads by structured clone, which keeps no class. */
export interface SerializedDatabaseError extends DatabaseErrorFields {
  message: string;
}

export type EmbeddedReply =
  | { kind: 'opened'; error?: SerializedDatabaseError }
  | { kind: 'result'; id: number; results: EmbeddedResult[] }
  | { kind: 'error'; id: number; error: SerializedDatabaseError }
  | { kind: 'notification'; subscription: number; payload: string };
