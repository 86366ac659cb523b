import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { requireService } from './services.js';

/**
 * A redis-server of the test's own (no persistence), so a suite can stop and restart it without
 * touching the shared Redis other suites use. Only ports of the caller's range.
 */
export class OwnRedis {
  private process: ChildProcess | null = null;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.process) return;
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.process = child;
    let exited: number | null | undefined;
    child.once('exit', (code) => (exited = code));
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (exited !== undefined) {
        this.process = null;
        throw new Error(`redis-server on port ${this.port} exited at start (code ${exited}): is the port taken?`);
      }
      const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /**
   * Stops the server from answering without closing anything (SIGSTOP): its connections stay open and
   * commands wait, as with a hung server or a network partition. `resume` lets it go on (SIGCONT).
   */
  pause(): void {
    this.signal('SIGSTOP');
  }

  resume(): void {
    this.signal('SIGCONT');
  }

  private signal(name: NodeJS.Signals): void {
    if (!this.process) throw new Error(`redis-server on port ${this.port} is not running`);
    this.process.kill(name);
  }

  /** Stops the server (SIGKILL: everything it held is gone, as after a crash). */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child) return;
    this.process = null;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * Whether a Redis server of a test's own can run here, and is asked for: these are Redis suites, so a run without
 * REDIS_URL (`npm test` on a fresh clone) skips them under that service's one notice, as it skips the others.
 */
export function redisServerAvailable(): boolean {
  if (requireService('REDIS_URL') === null) return false;
  try {
    return spawnSyncOk('redis-server', ['--version']);
  } catch {
    return false;
  }
}

function spawnSyncOk(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore' }).status === 0;
}
