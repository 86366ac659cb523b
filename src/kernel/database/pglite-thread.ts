import { type ExecFileException, execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { workerWithSemiSpace } from './engine-thread-heap.js';
import { type DatabaseErrorFields, ERROR_FIELDS, type EmbeddedCall, type EmbeddedReply, type EmbeddedResult, type EmbeddedThreadOptions, type SerializedDatabaseError } from './pglite-thread-protocol.js';

export type { EmbeddedResult } from './pglite-thread-protocol.js';

/** A statement's failure as the embedded engine reported it: the SQLSTATE in `code`, as node-postgres has it. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type -- the report's fields, assigned in the constructor
export interface EmbeddedDatabaseError extends DatabaseErrorFields {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class EmbeddedDatabaseError extends Error {
  constructor(report: SerializedDatabaseError) {
    super(report.message);
    for (const field of ERROR_FIELDS) if (report[field] !== undefined) this[field] = report[field];
  }
}

type Call = DistributiveOmit<EmbeddedCall, 'id'>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

interface Pending {
  resolve: (results: EmbeddedResult[]) => void;
  reject: (error: Error) => void;
}

/**
 * Creates the database for `dataDir` with `pglite-create.ts`, in a directory beside it that is renamed into
 * place once the creating process has closed it: `dataDir` holds a database (PG_VERSION) only when that
 * database is whole. A first start killed during creation, or its creating process outliving it while the
 * next start creates again, leaves only a `.creating-` directory behind (removed here on failure, and by the
 * next start), never a half-made database that the next start would open. Rejects with PostgreSQL's report
 * (or the process's output) if creation fails.
 */
async function createDatabase(dataDir: string): Promise<void> {
  if (existsSync(dataDir)) {
    // Checked first: creation takes seconds, and its result could not be put there.
    if (!statSync(dataDir).isDirectory()) throw new Error(`the embedded database's files: ENOTDIR: not a directory (${dataDir})`);
    if (readdirSync(dataDir).length > 0) throw new Error(`the embedded database's files: ${dataDir} holds files but no database (no PG_VERSION); move them away or use another data directory`);
  }
  const parent = dirname(dataDir);
  const prefix = `${basename(dataDir)}.creating-`;
  mkdirSync(parent, { recursive: true });
  // What an interrupted creation left (the data directory's lock is held: no one else creates now).
  for (const entry of readdirSync(parent)) if (entry.startsWith(prefix)) rmSync(join(parent, entry), { recursive: true, force: true });
  const building = join(parent, `${prefix}${process.pid}`);
  try {
    await runCreation(building);
    // An empty directory where the database goes (made by hand, or by an older version) gives way to it.
    if (existsSync(dataDir)) rmdirSync(dataDir);
    renameSync(building, dataDir);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

async function runCreation(dataDir: string): Promise<void> {
  const script = fileURLToPath(new URL('./pglite-create.js', import.meta.url));
  // None of this process's Node options (NODE_OPTIONS included): a profiler or a preloaded module is not the
  // creation's business. NODE_OPTIONS leads the copy and is emptied again over the environment's own.
  const env: NodeJS.ProcessEnv = { NODE_OPTIONS: '', ...process.env };
  env.NODE_OPTIONS = '';
  const { failure, stdout, stderr } = await new Promise<{ failure: ExecFileException | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [script, dataDir], { encoding: 'utf8', env }, (error, out, err) =>
      resolve({ failure: error, stdout: out, stderr: err }),
    );
  });
  if (!failure) return;
  let report: SerializedDatabaseError | null = null;
  try {
    report = JSON.parse(stdout) as SerializedDatabaseError;
  } catch {
    // not a report: the process failed before it could write one
  }
  if (report && typeof report.message === 'string') throw new EmbeddedDatabaseError(report);
  throw new Error(`creating the embedded database in ${dataDir} failed (${failure.signal ?? `exit code ${failure.code}`}): ${(stderr || stdout || failure.message).trim().slice(0, 2000)}`);
}

/**
 * The engine thread's semi-spaces, in MB (the serving flags give the main thread 32). Under the bench's load and
 * 1,000 slow streams (pglite-default) the process's peak RSS was 26–36 MB lower with 8, at the same throughput in
 * three alternating rounds; 2 saved 43 MB but cost about a tenth of the throughput at c=32 (bench/PROFILE.md,
 * stop 31).
 */
const ENGINE_SEMI_SPACE_MB = 8;

function spawn(options: EmbeddedThreadOptions): Worker {
  return workerWithSemiSpace(() => new Worker(new URL('./pglite-worker.js', import.meta.url), {
    workerData: options,
    // None of the process's options: V8 flags (the serving flags) are the whole process's already, and
    // Node refuses them for a thread; a preloaded module (a profiler, an inline script's input type) is not
    // the engine's business.
    execArgv: [],
  }), ENGINE_SEMI_SPACE_MB);
}

/** Resolves with the worker once its engine has opened; otherwise stops it and rejects with the reason. */
async function opened(worker: Worker): Promise<Worker> {
  await new Promise<void>((resolve, reject) => {
    const onMessage = (message: EmbeddedReply) => {
      if (message.kind !== 'opened') return;
      cleanup();
      if (message.error) reject(new EmbeddedDatabaseError(message.error));
      else resolve();
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new Error(`the embedded database's thread exited (code ${code}) before it opened`));
    };
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  return worker;
}

/** How long a closing engine may take to write its last pages before its thread is stopped. */
const CLOSE_TIMEOUT_MS = 30_000;

/**
 * PGlite on a worker thread (`pglite-worker.ts`), called as PGlite is: `query`, `exec`, `listen`, `close`.
 * Statements reach the engine in the order they are made. The thread keeps the process alive only while
 * a call is outstanding (a CLI command waiting for its answer), never for an idle session or a LISTEN.
 * Should the thread die, every outstanding and later call fails with the reason.
 */
export class PgliteThread {
  private readonly pending = new Map<number, Pending>();
  private readonly subscriptions = new Map<number, (payload: string) => void>();
  private nextId = 1;
  private stopped: Error | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (message: EmbeddedReply) => this.received(message));
    worker.on('error', (error) => this.stop(new Error(`the embedded database's thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.stop(new Error(`the embedded database's thread exited (code ${code})`)));
    worker.unref();
  }

  /**
   * Starts the thread and opens the engine on `dataDir` (null = in memory); rejects if it cannot open.
   * A data directory that holds no database yet gets one from a process of its own first
   * (`pglite-create.ts`): created in the serving process, it left that process about 800 MB larger for
   * good (the quick start's first `serve` held 1 GB idle). An in-memory database (tests) is created in place.
   */
  static async start(dataDir: string | null): Promise<PgliteThread> {
    if (dataDir !== null && !existsSync(join(dataDir, 'PG_VERSION'))) await createDatabase(dataDir);
    return new PgliteThread(await opened(spawn({ dataDir })));
  }

  /** `begin`: open a transaction first (see EmbeddedCall). */
  async query(sql: string, params: readonly unknown[], begin = false): Promise<EmbeddedResult> {
    return (await this.call({ op: 'query', sql, params, begin }))[0];
  }

  /** One or more statements without parameters (the simple protocol); a result per statement. */
  exec(sql: string, begin = false): Promise<EmbeddedResult[]> {
    return this.call({ op: 'exec', sql, begin });
  }

  /** A `COPY … FROM '/dev/blob'` statement fed `data` (see EmbeddedCall); `begin` as for query. */
  async copy(sql: string, data: string, begin = false): Promise<EmbeddedResult> {
    return (await this.call({ op: 'copy', sql, data, begin }))[0];
  }

  async listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
    const id = this.nextId++;
    this.subscriptions.set(id, onNotify);
    try {
      await this.call({ op: 'listen', channel, subscription: id });
    } catch (error) {
      this.subscriptions.delete(id);
      throw error;
    }
    return async () => {
      this.subscriptions.delete(id);
      await this.call({ op: 'unlisten', subscription: id });
    };
  }

  /** Closes the engine (its last writes included), then the thread. */
  async close(): Promise<void> {
    if (this.stopped) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    await this.call({ op: 'close' });
    this.stop(new Error('PGlite is closed'));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CLOSE_TIMEOUT_MS)));
    if ((await Promise.race([exited, late])) === 'late') await this.worker.terminate();
    clearTimeout(timer);
  }

  private call(call: Call): Promise<EmbeddedResult[]> {
    if (this.stopped) return Promise.reject(this.stopped);
    const id = this.nextId++;
    return new Promise<EmbeddedResult[]>((resolve, reject) => {
      try {
        this.worker.postMessage({ id, ...call } as EmbeddedCall);
      } catch (error) {
        // A parameter that cannot cross threads (a function, a class instance's private state): the
        // statement was never sent.
        reject(error as Error);
        return;
      }
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
    });
  }

  private received(message: EmbeddedReply): void {
    if (message.kind === 'notification') {
      this.subscriptions.get(message.subscription)?.(message.payload);
      return;
    }
    if (message.kind === 'opened') return;
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.settled(message.id);
    if (message.kind === 'result') pending.resolve(message.results);
    else pending.reject(new EmbeddedDatabaseError(message.error));
  }

  private settled(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  private stop(reason: Error): void {
    if (this.stopped) return;
    this.stopped = reason;
    this.subscriptions.clear();
    for (const [id, pending] of [...this.pending]) {
      this.settled(id);
      pending.reject(reason);
    }
  }
}
