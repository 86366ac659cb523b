import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';
import { declareSettings } from '../setting-declaration.js';
import { textSetting } from '../settings.js';

/** Node's own variable, read here for the one flag the embedded engine's thread must not inherit. */
export const ENGINE_THREAD_ENVIRONMENT = declareSettings('src/kernel/database', {
  NODE_OPTIONS: {
    type: "node's options",
    default: 'unset',
    meaning:
      "Node's own. Switchyard reads `--max-semi-space-size` from it (and from the command line) to give the embedded engine's thread a young generation of its own size " +
      'and put the process\'s back. Node refuses `--single-threaded-gc` and `--no-allocation-site-pretenuring` here: they go on the command line (see `npm start`)',
  },
});

/**
 * Starts a worker whose isolate has semi-spaces of at most `semiSpaceMb`, leaving the process's own setting
 * as it was for every isolate created after it.
 *
 * Why: the serving flags give the main thread 32 MB semi-spaces (its request path allocates fast), and V8's
 * flag is the whole process's: the embedded engine's thread got the same young generation, and its isolate
 * committed about 80 MB, of which 11 MB survive a full collection. `resourceLimits.maxYoungGenerationSizeMb` cannot
 * lower it (an explicit V8 flag wins over an isolate's constraints), so the flag is set for the moment the
 * worker's isolate is created (V8 reads it then, once) and put back when the worker is online (its JavaScript
 * runs, so its isolate exists) or has exited. No other worker may be started in between; none is (the gateway
 * starts the engine's thread once, while it opens its store, and the relay's thread, at its first page, later).
 */
export function workerWithSemiSpace(start: () => Worker, semiSpaceMb: number): Worker {
  if (!Number.isInteger(semiSpaceMb) || semiSpaceMb < 1) throw new Error(`semi-space of ${semiSpaceMb} MB: a positive whole number of MB`);
  const processSemiSpaceMb = processSemiSpace();
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    setFlagsFromString(`--max-semi-space-size=${processSemiSpaceMb}`);
  };
  setFlagsFromString(`--max-semi-space-size=${semiSpaceMb}`);
  let worker: Worker;
  try {
    worker = start();
  } catch (error) {
    restore();
    throw error;
  }
  worker.once('online', restore);
  worker.once('exit', restore);
  return worker;
}

/** The process's `--max-semi-space-size` from its command line or NODE_OPTIONS (the last wins); 0 is V8's own choice. */
function processSemiSpace(): number {
  const options = [...(textSetting(process.env, ENGINE_THREAD_ENVIRONMENT.NODE_OPTIONS) ?? '').split(/\s+/), ...process.execArgv];
  let value = 0;
  for (let i = 0; i < options.length; i++) {
    const match = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/.exec(options[i]);
    if (!match) continue;
    const given = match[1] ?? options[i + 1];
    if (given !== undefined && /^\d+$/.test(given)) value = Number(given);
  }
  return value;
}
