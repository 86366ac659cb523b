import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Fixed ports for servers the tests start themselves (a collector, a webhook receiver, a Redis or a
 * PostgreSQL of a suite's own). They live below the kernel's ephemeral range: an outgoing connection
 * (to the shared PostgreSQL, say) takes its local port from that range, and one that held a test
 * server's port made the server fail to start with EADDRINUSE — a CI failure of 2026-12-01, when these
 * ports were 55400-56899.
 */
const BASE = 20_000;
const SPAN = 2_000;

/** Port `BASE + offset`; each suite owns its offsets (see the callers). */
export function testPort(offset: number): number {
  if (!Number.isInteger(offset) || offset < 0 || offset >= SPAN) throw new Error(`test port offset ${offset} is outside 0-${SPAN - 1}`);
  return BASE + offset;
}

export interface PortRange {
  first: number;
  last: number;
}

/** Ports of the suites that start gateway processes of their own (spool, CLI, admin token). */
export const SPOOL_PORTS: PortRange = { first: testPort(1400), last: testPort(1499) };
/** Ports of PostgreSQL servers of a test's own. */
export const OWN_POSTGRES_PORTS: PortRange = { first: testPort(400), last: testPort(499) };

/** Whether nothing listens on 127.0.0.1:`port` (probed by listening on it for a moment). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port of the range nothing listens on (skipping `taken`), scanned from a random place so parallel
 * workers rarely probe the same one.
 */
export async function freePortIn(range: PortRange, taken: Iterable<number> = []): Promise<number> {
  const skip = new Set(taken);
  const size = range.last - range.first + 1;
  const start = Math.floor(Math.random() * size);
  for (let i = 0; i < size; i++) {
    const port = range.first + ((start + i) % size);
    if (!skip.has(port) && (await portIsFree(port))) return port;
  }
  throw new Error(`no free port in ${range.first}-${range.last}`);
}

/** The kernel's ephemeral range, where one is readable (Linux). */
export function ephemeralPortRange(): PortRange | null {
  try {
    const [first, last] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(first) && Number.isInteger(last) ? { first, last } : null;
  } catch {
    return null;
  }
}

/** Listens on 127.0.0.1:`port`, failing at once (not at the hook's timeout) when the port is taken. */
export function listenOn(server: { listen(port: number, host: string, ready: () => void): unknown; once(event: 'error', listener: (error: Error) => void): unknown; off(event: 'error', listener: (error: Error) => void): unknown }, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
