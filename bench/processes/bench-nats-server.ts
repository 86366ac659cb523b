import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A NATS JetStream server of a bench's own (a temporary store, a port in 21,700–21,749). */
export interface BenchNatsServer {
  url: string;
  pid: number;
  stop(): void;
}

export async function startBenchNatsServer(): Promise<BenchNatsServer> {
  const port = 21_700 + Math.floor(Math.random() * 50);
  const store = mkdtempSync(join(tmpdir(), 'switchyard-bench-nats-'));
  const nats = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', store], { stdio: 'ignore' });
  let failed: Error | null = null;
  nats.once('error', (error) => (failed = error)); // not installed: ENOENT
  const stop = () => {
    nats.kill('SIGTERM');
    rmSync(store, { recursive: true, force: true });
  };
  for (const started = Date.now(); !(await accepts(port)); ) {
    if (Date.now() - started > 10_000 || nats.exitCode !== null || failed) {
      stop();
      throw new Error(`nats-server did not start${failed ? ` (${(failed as Error).message})` : ''}; install it, or pass --url`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `nats://127.0.0.1:${port}`, pid: nats.pid!, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
