import { Logger } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import { join } from 'node:path';
import type { AdminTokens } from '../modules/admin/admin-tokens.js';

/** Unix socket paths are bounded (108 bytes on Linux, with the terminating NUL). */
const MAX_SOCKET_PATH = 107;

/** Where a server on an embedded data directory listens for the CLI (a directory only its owner may enter). */
export function operatorSocketPath(dataDir: string): string {
  return join(dataDir, 'run', 'switchyard.sock');
}

/**
 * The operator socket: with embedded PGlite only the server may open the data directory, so CLI commands
 * run on the same machine reach the store through the server instead. The socket lies in `run/` in the
 * data directory (mode 0700, the socket itself 0600): whoever may open it may already read and write
 * the data directory, so reaching it is the credential, and no admin token has to be handed around.
 * Requests are the admin API's (`/admin/v1/…` only), answered by the same routes, guard and validation,
 * as the actor `admin:local-operator`.
 */
export class OperatorSocket {
  private constructor(
    private readonly server: Server,
    readonly path: string,
  ) {}

  static async open(dataDir: string, fastify: FastifyInstance, tokens: AdminTokens): Promise<OperatorSocket | null> {
    const logger = new Logger('OperatorSocket');
    const path = operatorSocketPath(dataDir);
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
      logger.warn(`no operator socket: ${path} is longer than a unix socket path may be; CLI commands need the server stopped`);
      return null;
    }
    mkdirSync(join(dataDir, 'run'), { recursive: true, mode: 0o700 });
    chmodSync(join(dataDir, 'run'), 0o700);
    // Left by a server that died: this process holds the data directory's lock, so nobody else uses it.
    rmSync(path, { force: true });
    const token = tokens.addLocalOperator();
    const server = createServer((request, response) => {
      if (!(request.url ?? '').startsWith('/admin/v1/')) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'not_found', message: 'The operator socket serves the admin API (/admin/v1/…) only.' } }));
        return;
      }
      delete request.headers['x-admin-token'];
      request.headers.authorization = `Bearer ${token}`;
      fastify.routing(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
    chmodSync(path, 0o600);
    return new OperatorSocket(server, path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.path, { force: true });
  }
}
