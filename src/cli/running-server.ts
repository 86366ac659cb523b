import { existsSync } from 'node:fs';
import { request } from 'node:http';
import type { Environment } from '../config/environment.js';
import { DataDirLock } from '../kernel/database/data-dir-lock.js';
import { operatorSocketPath } from '../operator-socket.js';

/** The running server refused or failed a command; its message is the admin API's, meant for the operator. */
export class ServerRefusedError extends Error {
  override readonly name = 'ServerRefusedError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/**
 * A server holding the embedded data directory, reached through its operator socket (src/operator-socket.ts).
 * CLI commands that need the store use it instead of opening PGlite, which only one process may do.
 */
export class RunningServer {
  constructor(
    readonly socketPath: string,
    readonly pid: number,
  ) {}

  get<T>(path: string): Promise<T> {
    return this.send<T>('GET', path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.send<T>('POST', path, body);
  }

  /**
   * A streamed answer (NDJSON), handed on chunk by chunk; `write` may return a promise to apply
   * backpressure. Rejects when the server refuses it or the stream is cut before its end.
   */
  stream(path: string, write: (chunk: Buffer) => void | Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const outgoing = request({ socketPath: this.socketPath, path, method: 'GET' }, (response) => {
        const status = response.statusCode ?? 500;
        if (status >= 400) {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => reject(refusal(status, Buffer.concat(chunks).toString('utf8'))));
          return;
        }
        (async () => {
          for await (const chunk of response) await write(chunk as Buffer);
          if (!response.complete) throw new Error('the server ended the stream before its end (see its log)');
        })().then(resolve, reject);
      });
      outgoing.on('error', (error) => reject(this.unreachable(error)));
      outgoing.end();
    });
  }

  private send<T>(method: string, path: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    return new Promise<T>((resolve, reject) => {
      const outgoing = request({ socketPath: this.socketPath, path, method, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 500;
          if (status >= 400) reject(refusal(status, text));
          else resolve(parseJson(text) as T);
        });
      });
      outgoing.on('error', (error) => reject(this.unreachable(error)));
      outgoing.end(payload);
    });
  }

  private unreachable(error: Error): Error {
    return new Error(`the server (process ${this.pid}) holds the data directory but its operator socket ${this.socketPath} does not answer: ${error.message}`);
  }
}

/** The admin API's error answer, as the operator should read it. */
function refusal(status: number, text: string): ServerRefusedError {
  const error = (parseJson(text) as { error?: { message?: string; code?: string } } | null)?.error;
  return new ServerRefusedError(error?.message ?? `the server answered ${status}`, status, error?.code ?? null);
}

/**
 * The server to talk to, when a live process holds the embedded data directory; null when the CLI may
 * open the store itself (PostgreSQL, or nobody holds the directory).
 */
export function runningServer(environment: Environment): RunningServer | null {
  if (environment.databaseUrl || environment.dataDir === ':memory:') return null;
  const pid = DataDirLock.owner(environment.dataDir);
  if (pid === null) return null;
  const socketPath = operatorSocketPath(environment.dataDir);
  if (!existsSync(socketPath)) {
    throw new Error(
      `The data directory ${environment.dataDir} is in use by process ${pid}, which offers no operator socket (${socketPath}) yet: ` +
        `it may still be starting (try again), or be a Switchyard without one. Stop it, or point DATABASE_URL at a PostgreSQL server.`,
    );
  }
  return new RunningServer(socketPath, pid);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
