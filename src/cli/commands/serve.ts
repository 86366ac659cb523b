import { Logger } from '@nestjs/common';
import { readEnvironment } from '../../config/environment.js';
import { startGateway } from '../../gateway.js';

export async function serve(): Promise<void> {
  const environment = readEnvironment();
  const gateway = await startGateway(environment);
  const logger = new Logger('Switchyard');
  const base = `http://${environment.host === '0.0.0.0' ? '127.0.0.1' : environment.host}:${new URL(gateway.url).port}`;
  const store = environment.databaseUrl ? 'PostgreSQL' : `embedded PGlite in ${environment.dataDir}`;
  logger.log(`Switchyard is serving on ${base} (event store: ${store}, durability: ${environment.durability})`);
  if (gateway.adminToken) {
    // Printed this once only: the database keeps its SHA-256. Set ADMIN_TOKEN to choose your own.
    process.stdout.write(
      `\nAdmin token (shown once, stored hashed): ${gateway.adminToken}\n` +
        `  curl ${base}/admin/v1/status -H "Authorization: Bearer <admin token>"\n\n`,
    );
  }
  if (gateway.demoKey) {
    process.stdout.write(
      `\nDemo configuration (alias "demo" on the built-in mock provider).\n` +
        `Demo key: ${gateway.demoKey}\n\n` +
        `Try it:\n  curl ${base}/v1/chat/completions \\\n    -H "Authorization: Bearer ${gateway.demoKey}" \\\n` +
        `    -H "Content-Type: application/json" \\\n    -d '{"model":"demo","messages":[{"role":"user","content":"Hello!"}]}'\n\n` +
        `Add "stream": true to the body for server-sent events.\n\n`,
    );
  }
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: finishing in-flight requests and closing`);
    gateway.close().then(
      () => process.exit(0),
      (error: Error) => {
        logger.error(`shutdown failed: ${error.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
