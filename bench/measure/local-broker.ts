import { readFileSync, readdirSync } from 'node:fs';

/**
 * The processes of a NATS server on this machine that listens on `url`'s port (`nats://host:port`, 4222 when
 * none is given): a -relay variant's broker, whose CPU the run reports beside the gateway's. A deployment runs
 * its broker elsewhere; a bench machine runs it on the same cores, and the serving path's throughput pays for
 * both. Found by its command line (`nats-server … -p PORT`, or no port given for 4222). Empty when the host is
 * not this machine or no such process is visible.
 */
export function localNatsServerPids(url: string): number[] {
  let parsed: URL;
  try {
    parsed = new URL(url.split(',')[0]);
  } catch {
    return [];
  }
  if (parsed.protocol !== 'nats:' || !['127.0.0.1', 'localhost', '::1', '[::1]'].includes(parsed.hostname)) return [];
  const port = parsed.port || '4222';
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      continue; // gone meanwhile
    }
    if (argv.length === 0 || !/(^|\/)nats-server$/.test(argv[0])) continue;
    if (listensOn(argv, port)) pids.push(Number(name));
  }
  return pids;
}

/** Whether a nats-server command line listens on `port`: `-p N`, `--port N`, `-p=N`, or none (4222). */
export function listensOn(argv: readonly string[], port: string): boolean {
  for (let i = 1; i < argv.length; i++) {
    const flag = /^--?(?:p|port)(?:=(\d+))?$/.exec(argv[i]);
    if (flag) return (flag[1] ?? argv[i + 1]) === port;
  }
  return port === '4222';
}
