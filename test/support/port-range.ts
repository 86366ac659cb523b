import { createServer } from 'node:net';

/** The ports this suite's servers may use (each helper of the project has a range of its own). */
export const SPOOL_PORTS = { first: 56400, last: 56499 };

/** The first port of the range nothing listens on (skipping `taken`). */
export async function freePortIn(range: { first: number; last: number }, taken: readonly number[] = []): Promise<number> {
  for (let port = range.first; port <= range.last; port++) {
    if (taken.includes(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in ${range.first}-${range.last}`);
}
