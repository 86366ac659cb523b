import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortIn, testPort } from './port-range.js';

/** Ports of NATS servers of a suite's own. */
const OWN_NATS_PORTS = { first: testPort(1600), last: testPort(1649) };

/**
 * A NATS server with JetStream of a test's own (a temporary store, a free port), for what the shared one on
 * 4222 must not suffer: being stopped and restarted, or limits set on its stream.
 */
export class OwnNats {
  private process: ChildProcess | null = null;
  private constructor(readonly port: number, private readonly storeDir: string) {}

  static async start(): Promise<OwnNats> {
    const nats = new OwnNats(await freePortIn(OWN_NATS_PORTS), mkdtempSync(join(tmpdir(), 'switchyard-nats-')));
    await nats.restart();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again, on the same port and store) and waits until it accepts connections. */
  async restart(): Promise<void> {
    if (this.process) throw new Error('already running');
    const child = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(this.port), '-sd', this.storeDir], { stdio: 'ignore' });
    this.process = child;
    child.once('exit', () => {
      if (this.process === child) this.process = null;
    });
    for (const started = Date.now(); !(await accepts(this.port)); ) {
      if (Date.now() - started > 10_000) throw new Error(`nats-server on ${this.port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops the server (SIGTERM: a broker restart; its store stays). */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    this.process = null;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}

export function natsServerAvailable(): boolean {
  try {
    execFileSync('nats-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
