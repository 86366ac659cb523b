import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  private constructor(readonly port: number, private readonly storeDir: string, private readonly configFile: string | null) {}

  /**
   * `authorization`: the body of a nats-server `authorization { … }` block (users and their permissions), for a
   * server whose clients must sign in; without it anyone may connect and do anything.
   */
  static async start(options: { authorization?: string } = {}): Promise<OwnNats> {
    const port = await freePortIn(OWN_NATS_PORTS);
    const storeDir = mkdtempSync(join(tmpdir(), 'switchyard-nats-'));
    let configFile: string | null = null;
    if (options.authorization) {
      configFile = join(storeDir, 'nats.conf');
      writeFileSync(configFile, `listen: "127.0.0.1:${port}"\njetstream { store_dir: ${JSON.stringify(join(storeDir, 'js'))} }\nauthorization {\n${options.authorization}\n}\n`);
    }
    const nats = new OwnNats(port, storeDir, configFile);
    await nats.restart();
    return nats;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts the server (again, on the same port and store) and waits until it accepts connections. */
  async restart(): Promise<void> {
    if (this.process) throw new Error('already running');
    const args = this.configFile ? ['-c', this.configFile] : ['-js', '-a', '127.0.0.1', '-p', String(this.port), '-sd', this.storeDir];
    const child = spawn('nats-server', args, { stdio: 'ignore' });
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
