import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { NODE_FLAGS } from '../../src/cli/serving-flags.js';

/** The compiled CLI entry point (`switchyard …`). */
export const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs one CLI command to completion. */
/**
 * These suites count provider calls, attempts and ledger rows of repeated identical requests: the exact
 * cache (on by default) would answer the repeats. Its own suites turn it on (exact-cache.test.ts).
 */
const WITHOUT_EXACT_CACHE = { SWITCHYARD_CACHE: 'off' };

export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { ...WITHOUT_EXACT_CACHE, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr })));
}

/** A `switchyard serve` process whose stdout and stderr are captured for the whole of its life. */
export interface ServerProcess {
  child: ChildProcess;
  port: number;
  url: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startServer(env: NodeJS.ProcessEnv, port?: number): Promise<ServerProcess> {
  const chosen = port ?? (await freePort());
  // With the flags `npm start` passes, so that the process under test is the one users run.
  const child = spawn(process.execPath, [...NODE_FLAGS, MAIN, 'serve'], { env: { ...WITHOUT_EXACT_CACHE, ...env, PORT: String(chosen) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${chosen}`;
  const server: ServerProcess = {
    child,
    port: chosen,
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
  for (let waited = 0; waited < 60_000; waited += 100) {
    if (child.exitCode !== null) throw new Error(`server exited during start: ${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return server;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${output}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}
