import { execFile } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OWN_POSTGRES_PORTS, freePortIn, portIsFree } from './port-range.js';
import { requireService } from './services.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';

/** Transaction ids per pg_xact segment file: 32 pages of 8 KiB, four 2-bit statuses per byte. */
const XIDS_PER_XACT_SEGMENT = 32 * 8192 * 4;
const XACT_SEGMENT_BYTES = 32 * 8192;


/** Ports of servers created by this process and not removed yet (a stopped server keeps its port). */
const taken = new Set<number>();

/**
 * Whether servers of a test's own can run here (PostgreSQL 15's binaries and a `postgres` user) and are asked for.
 * Without the binaries such suites are skipped, and say so; under CI=true a missing server fails the run instead.
 * They are PostgreSQL suites like those DATABASE_URL serves, so a run without DATABASE_URL (a developer who has
 * not set PostgreSQL up for the tests: `npm test` on a fresh clone) skips them under that service's one notice.
 */
export function ownPostgresAvailable(): boolean {
  if (requireService('DATABASE_URL') === null) return false;
  const available = existsSync(join(BIN, 'initdb')) && readFileSync('/etc/passwd', 'utf8').split('\n').some((line) => line.startsWith('postgres:'));
  if (available) return true;
  if (process.env.CI === 'true') throw new Error(`PostgreSQL binaries in ${BIN} are required under CI=true`);
  process.stderr.write(`[skip] no PostgreSQL binaries in ${BIN}: skipping the suites that start a server of their own\n`);
  return false;
}

export interface OwnPostgresOptions {
  /** The first transaction id the server hands out, set before its first start (pg_resetwal -x). */
  nextTransactionId?: number;
  /** Default: the first free port in the assigned range. */
  port?: number;
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string>;
}

/**
 * A PostgreSQL server of a test's own, in a temporary directory: for outages (stop, kill -9, start
 * again) and for transaction-id boundaries a fresh database never reaches by itself. It runs as the
 * `postgres` user (initdb refuses root), on loopback only, and is removed by `remove()`.
 */
export class OwnPostgres {
  private running = false;

  private constructor(
    readonly dataDir: string,
    readonly port: number,
    private readonly settings: Record<string, string>,
  ) {}

  /** initdb (+ the chosen next transaction id) and start. */
  static async create(options: OwnPostgresOptions = {}): Promise<OwnPostgres> {
    const root = mkdtempSync(join(tmpdir(), 'switchyard-own-pg-'));
    chownSync(root, uid('postgres'), gid('postgres'));
    const dataDir = join(root, 'data');
    // fsync off: these servers only ever lose processes, never the machine, so the page cache keeps
    // every committed write; it spares a loaded CI machine thousands of flushes.
    const settings = { fsync: 'off', full_page_writes: 'off', ...options.settings };
    let server = new OwnPostgres(dataDir, options.port ?? (await freePortIn(OWN_POSTGRES_PORTS, taken)), settings);
    taken.add(server.port);
    try {
      await asPostgres('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
      if (options.nextTransactionId !== undefined) await server.setNextTransactionId(options.nextTransactionId);
      for (let attempt = 1; ; attempt++) {
        try {
          await server.start();
          return server;
        } catch (error) {
          // Suites run in parallel workers: another worker's server can take the port between the probe and
          // the start. Then the same data directory starts on another port.
          if (options.port !== undefined || attempt >= 5 || !portWasTaken(join(root, 'server.log'))) throw error;
          server = new OwnPostgres(dataDir, await freePortIn(OWN_POSTGRES_PORTS, taken), settings);
          taken.add(server.port);
        }
      }
    } catch (error) {
      await server.remove().catch(() => undefined);
      throw error;
    }
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  get isRunning(): boolean {
    return this.running;
  }

  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-c listen_addresses=127.0.0.1`,
      `-c unix_socket_directories=''`,
      ...Object.entries(this.settings).map(([name, value]) => `-c ${name}=${value}`),
    ].join(' ');
    await asPostgres('pg_ctl', ['start', '-w', '-t', '60', '-D', this.dataDir, '-l', join(this.dataDir, '..', 'server.log'), '-o', options]);
    this.running = true;
  }

  /** A clean shutdown (`fast`: ends sessions, checkpoints) or `immediate` (no checkpoint; recovery at next start). */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    if (!this.running) return;
    await asPostgres('pg_ctl', ['stop', '-w', '-t', '60', '-m', mode, '-D', this.dataDir]);
    this.running = false;
  }

  /** kill -9 of the postmaster (its backends exit as they notice); the next start runs crash recovery. */
  async kill(): Promise<void> {
    if (!this.running) return;
    const pid = Number(readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    for (let waited = 0; waited < 10_000 && isAlive(pid); waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    // Orphaned backends keep the shared memory until they exit; wait for the port to close.
    for (let waited = 0; waited < 10_000 && !(await portIsFree(this.port)); waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    this.running = false;
  }

  /**
   * While stopped: make `xid` the next transaction id (pg_resetwal -x). Only forward: going back would
   * make committed rows look like they come from the future. The pg_xact segment holding `xid` must
   * exist at full size; missing statuses read as "never committed", which is right for ids never used.
   */
  async setNextTransactionId(xid: number): Promise<void> {
    if (this.running) throw new Error('stop the server before moving its transaction ids');
    const current = await this.nextTransactionId();
    if (xid < current) throw new Error(`next transaction id ${current} is past ${xid}; ids only move forward`);
    const segment = join(this.dataDir, 'pg_xact', Math.floor(xid / XIDS_PER_XACT_SEGMENT).toString(16).toUpperCase().padStart(4, '0'));
    if (!existsSync(segment)) closeSync(openSync(segment, 'w'));
    if (statSync(segment).size < XACT_SEGMENT_BYTES) truncateSync(segment, XACT_SEGMENT_BYTES);
    chownSync(segment, uid('postgres'), gid('postgres'));
    await asPostgres('pg_resetwal', ['-x', String(xid), '-D', this.dataDir]);
  }

  /** The next transaction id per pg_controldata (of the last checkpoint; exact after a clean stop). */
  async nextTransactionId(): Promise<number> {
    const { stdout } = await asPostgres('pg_controldata', ['-D', this.dataDir]);
    const match = /Latest checkpoint's NextXID:\s+(\d+):(\d+)/.exec(stdout);
    if (!match) throw new Error(`pg_controldata printed no NextXID:\n${stdout}`);
    return Number(match[2]);
  }

  /** Stops the server (immediately) and deletes its directory. */
  async remove(): Promise<void> {
    if (this.running) await this.stop('immediate').catch(() => this.kill());
    rmSync(join(this.dataDir, '..'), { recursive: true, force: true });
    taken.delete(this.port);
  }
}

async function asPostgres(binary: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run('runuser', ['-u', 'postgres', '--', join(BIN, binary), ...args], { cwd: tmpdir(), timeout: 120_000 });
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${binary} ${args.join(' ')} failed: ${failure.stderr || failure.stdout || failure.message}`);
  }
}

function uid(user: string): number {
  return idOf(user, 2);
}

function gid(user: string): number {
  return idOf(user, 3);
}

function idOf(user: string, field: number): number {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith(`${user}:`));
  if (!line) throw new Error(`no ${user} user on this machine`);
  return Number(line.split(':')[field]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether a failed start's log says the port was in use. */
function portWasTaken(logFile: string): boolean {
  try {
    return /could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(readFileSync(logFile, 'utf8'));
  } catch {
    return false;
  }
}
