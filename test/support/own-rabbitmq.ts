import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortIn, testPort } from './port-range.js';

/** Ports of RabbitMQ nodes of a suite's own (the AMQP port; the distribution port is the next one). */
const OWN_RABBITMQ_PORTS = { first: testPort(1650), last: testPort(1698) };
const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';

/**
 * A RabbitMQ node of a test's own (its own node name, ports, Mnesia directory and Erlang cookie), for a
 * broker restart the shared one on 5672 must not suffer. Starting a node takes 10–30 s on these machines.
 */
export class OwnRabbitMq {
  private process: ChildProcess | null = null;
  private constructor(readonly port: number, private readonly dir: string, private readonly node: string) {}

  /** `maxMessageSize`: the node's `max_message_size` in bytes (a limit to make it refuse a message). */
  static async start(options: { maxMessageSize?: number } = {}): Promise<OwnRabbitMq> {
    const port = await freePortIn(OWN_RABBITMQ_PORTS);
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-rabbitmq-'));
    writeFileSync(join(dir, 'enabled_plugins'), '[].');
    writeFileSync(join(dir, 'rabbitmq.conf'), options.maxMessageSize ? `max_message_size = ${options.maxMessageSize}\n` : '');
    const rabbit = new OwnRabbitMq(port, dir, `switchyard-test-${port}@localhost`);
    await rabbit.restart();
    return rabbit;
  }

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    if (this.process) throw new Error('already running');
    const env = {
      ...process.env, HOME: this.dir, RABBITMQ_NODENAME: this.node, RABBITMQ_NODE_PORT: String(this.port), RABBITMQ_DIST_PORT: String(this.port + 1),
      RABBITMQ_MNESIA_BASE: join(this.dir, 'mnesia'), RABBITMQ_LOG_BASE: join(this.dir, 'log'), RABBITMQ_ENABLED_PLUGINS_FILE: join(this.dir, 'enabled_plugins'),
      RABBITMQ_PID_FILE: join(this.dir, 'pid'), RABBITMQ_CONFIG_FILE: join(this.dir, 'rabbitmq'),
    };
    const child = spawn(RABBITMQ_SERVER, [], { env, stdio: 'ignore', detached: true });
    this.process = child;
    child.once('exit', () => {
      if (this.process === child) this.process = null;
    });
    for (const started = Date.now(); !(await accepts(this.port)); ) {
      if (Date.now() - started > 90_000) throw new Error(`rabbitmq-server on ${this.port} did not start`);
      if (!this.process) throw new Error(`rabbitmq-server on ${this.port} exited during start`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Stops the node (SIGTERM to its Erlang VM, whose pid it writes; the store stays for the restart). */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child) return;
    const pidFile = join(this.dir, 'pid');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const vm = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : NaN;
    if (Number.isInteger(vm) && vm > 0) process.kill(vm, 'SIGTERM');
    else process.kill(-child.pid!, 'SIGTERM');
    await exited;
    this.process = null;
  }

  async close(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function rabbitMqServerAvailable(): boolean {
  return existsSync(RABBITMQ_SERVER);
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
