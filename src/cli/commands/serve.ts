import { Logger } from '@nestjs/common';
import cluster from 'node:cluster';
import { type Environment, readEnvironment } from '../../config/environment.js';
import { startGateway } from '../../gateway.js';
import { startupBanner } from '../../startup-banner.js';
import { prepareCluster } from '../../cluster-setup.js';
import { serveClusterMetrics } from '../../../modules/observability/index.js';
import { servingEnvFor } from '../serving-flags.js';

/**
 * `switchyard serve`: one process, or with SWITCHYARD_WORKERS=N a primary that sets the node up once
 * (migrations, admin token, configuration) and runs the durable projections, and N HTTP workers sharing
 * the port through node:cluster, each with its own routing snapshot and key index fed by the log.
 */
export async function serve(): Promise<void> {
  const environment = readEnvironment();
  if (cluster.isWorker) return serveWorker(environment);
  if ((environment.workers ?? 1) > 1) return servePrimary(environment);
  const gateway = await startGateway(environment);
  announce(environment, gateway.url, gateway.adminToken, gateway.demoKey, 1);
  onShutdown((signal) => {
    new Logger('Switchyard').log(`${signal}: finishing in-flight requests and closing`);
    return gateway.close();
  });
}

async function servePrimary(environment: Environment): Promise<void> {
  const logger = new Logger('Switchyard');
  const setup = await prepareCluster(environment);
  // A scrape reaches one worker; it asks here for the sum over all of them.
  serveClusterMetrics();
  const workers = environment.workers ?? 1;
  let stopping = false;
  // A worker keeps its slot's node id across restarts, so the events it records stay attributable.
  const slots = new Map<number, number>();
  // Workers get the serving environment even when the primary was started without it.
  const workerEnv = servingEnvFor(process.env);
  const fork = (slot: number) => slots.set(cluster.fork({ ...workerEnv, SWITCHYARD_NODE_ID: `${environment.nodeId}/w${slot}` }).id, slot);
  const ready = new Promise<string>((resolve) => {
    let listening = 0;
    cluster.on('listening', (_worker, address) => {
      if (++listening === workers) resolve(`http://${address.address === '0.0.0.0' || !address.address ? '127.0.0.1' : address.address}:${address.port}`);
    });
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
    const slot = slots.get(worker.id) ?? 1;
    slots.delete(worker.id);
    fork(slot);
  });
  for (let slot = 1; slot <= workers; slot++) fork(slot);
  announce(environment, await ready, setup.adminToken, setup.demoKey, workers);
  onShutdown(async (signal) => {
    stopping = true;
    logger.log(`${signal}: stopping ${workers} workers, then the projections`);
    const exits = Object.values(cluster.workers ?? {}).map((worker) => new Promise<void>((resolve) => {
      if (!worker) return resolve();
      worker.once('exit', () => resolve());
      worker.process.kill('SIGTERM');
    }));
    await Promise.all(exits);
    await setup.close();
  });
}

async function serveWorker(environment: Environment): Promise<void> {
  // The primary applied the configuration and runs the durable projections.
  const gateway = await startGateway(environment, { applyConfig: false, runDurable: false });
  onShutdown(() => gateway.close());
}

function announce(environment: Environment, url: string, adminToken: string | null, demoKey: string | null, workers: number): void {
  const base = `http://${environment.host === '0.0.0.0' ? '127.0.0.1' : environment.host}:${new URL(url).port}`;
  const shape = workers > 1 ? ` with ${workers} workers` : '';
  const tokenSource = adminToken ? 'generated_now' : environment.adminToken ? 'environment' : 'stored';
  const inForce = startupBanner(environment, tokenSource).map((line) => `\n  ${line}`).join('');
  new Logger('Switchyard').log(`Switchyard is serving on ${base}${shape}. In force:${inForce}`);
  if (adminToken) {
    // Printed this once only: the database keeps its SHA-256. Set ADMIN_TOKEN to choose your own.
    process.stdout.write(
      `\nAdmin token (shown once, stored hashed): ${adminToken}\n` +
        `  curl ${base}/admin/v1/status -H "Authorization: Bearer <admin token>"\n` +
        `  or sign in to the console with it: ${base}/console\n\n`,
    );
  }
  if (demoKey) {
    process.stdout.write(
      `\nDemo configuration (alias "demo" on the built-in mock provider).\n` +
        `Demo key: ${demoKey}\n\n` +
        `Try it:\n  curl ${base}/v1/chat/completions \\\n    -H "Authorization: Bearer ${demoKey}" \\\n` +
        `    -H "Content-Type: application/json" \\\n    -d '{"model":"demo","messages":[{"role":"user","content":"Hello!"}]}'\n\n` +
        `Add "stream": true to the body for server-sent events.\n\n`,
    );
  }
}

function onShutdown(close: (signal: string) => Promise<void>): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    close(signal).then(
      () => process.exit(0),
      (error: Error) => {
        new Logger('Switchyard').error(`shutdown failed: ${error.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
