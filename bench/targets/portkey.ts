import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { portkeyServer, repositoryRoot } from '../paths.js';
import { freePort, logTail, spawnLogged, stopChild, waitForHttp } from './launch.js';
import { CHAT_PATH, type Target, chatBody } from './target.js';

/**
 * Portkey's open-source gateway (the dev dependency), as its README starts it, pointed at the mock
 * with its custom-host header. Buffered only: its streaming fails on Node 20.
 */
export async function startPortkey(mockUrl: string, workDir: string): Promise<Target | { skipped: string }> {
  if (!existsSync(portkeyServer)) return { skipped: '@portkey-ai/gateway is not installed (npm install)' };
  const version = (JSON.parse(readFileSync(join(repositoryRoot, 'node_modules', '@portkey-ai', 'gateway', 'package.json'), 'utf8')) as { version: string }).version;
  const port = await freePort();
  const log = join(workDir, 'portkey.log');
  const child = spawnLogged(process.execPath, [portkeyServer, `--port=${port}`, '--headless'], { PATH: process.env.PATH, HOME: process.env.HOME }, log);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${origin}/`, child, () => true);
  } catch (error) {
    await stopChild(child);
    throw new Error(`Portkey ${(error as Error).message}\n${logTail(log)}`);
  }
  return {
    id: 'portkey',
    kind: 'portkey',
    origin,
    modes: ['buffered'],
    request: (mode) => ({
      path: CHAT_PATH,
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-bench-not-a-real-key',
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': `${mockUrl}/v1`,
      },
      body: chatBody('bench-model', mode),
      stream: mode === 'sse',
    }),
    streamsRequest: () => {
      throw new Error('Portkey is measured on buffered requests only');
    },
    processes: () => (child.pid ? [child.pid] : []),
    postgres: null,
    details: { version, log },
    stop: () => stopChild(child),
  };
}
