import { runCli } from '../../src/cli/run-cli.js';
import type { CliResult } from './cli-process.js';

/**
 * The CLI in the test's own process: the `runCli` that `switchyard` (src/main.ts) runs, with stdout and
 * stderr captured and `env` as the process environment for the length of the call. For calls whose subject
 * is what a command does (its refusals, plans, reports), not that it runs as a process of its own: a
 * spawned `switchyard` pays about 2 s of CPU loading the application before it reads its arguments, and
 * the suites made dozens of such calls one after another on CI's two cores. What only a process shows
 * (exit through a closed pipe, signals, another process reaching a server's operator socket, the real
 * start-up) stays spawned (cli-process.ts).
 *
 * Calls run one at a time: the streams and the environment they replace are the process's own.
 */
let queue: Promise<unknown> = Promise.resolve();

export function runCliInProcess(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const call = queue.then(() => runOnce(args, env));
  queue = call.catch(() => undefined);
  return call;
}

async function runOnce(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  // As cli-process.ts's runCli gives a spawned CLI: the exact cache off unless the caller says otherwise.
  const wanted: NodeJS.ProcessEnv = { SWITCHYARD_CACHE: 'off', ...env };
  const saved = { ...process.env };
  replaceEnvironment(wanted);
  const out: string[] = [];
  const err: string[] = [];
  const streams = [[process.stdout, out], [process.stderr, err]] as const;
  const writes = streams.map(([stream]) => stream.write);
  for (const [stream, sink] of streams) {
    stream.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
      sink.push(String(chunk));
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') queueMicrotask(() => (done as () => void)());
      return true;
    }) as typeof stream.write;
  }
  try {
    const code = await runCli(args);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    streams.forEach(([stream], i) => (stream.write = writes[i]));
    replaceEnvironment(saved);
  }
}

function replaceEnvironment(next: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(process.env)) if (!(name in next)) delete process.env[name];
  for (const [name, value] of Object.entries(next)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}
