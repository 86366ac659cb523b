import { HelperProcess } from '../processes/ipc.js';
import { helperModule } from '../paths.js';
import { CHAT_PATH, type Target, chatBody } from './target.js';

/** The floor: a minimal Node proxy (processes/bare-proxy.ts) in its own process. */
export async function startBareProxy(mockUrl: string): Promise<Target> {
  const { helper, ready } = await HelperProcess.start<{ url: string }>(helperModule('bare-proxy'), ['--upstream', mockUrl]);
  return {
    id: 'bare',
    kind: 'bare',
    origin: ready.url,
    modes: ['buffered', 'sse'],
    request: (mode) => ({ path: CHAT_PATH, headers: { 'content-type': 'application/json' }, body: chatBody('bench-model', mode), stream: mode === 'sse' }),
    streamsRequest: () => ({ path: CHAT_PATH, headers: { 'content-type': 'application/json' }, body: chatBody('bench-model', 'sse'), stream: true }),
    processes: () => [helper.pid],
    postgres: null,
    details: { implementation: 'node:http server + one undici Pool, body buffered, answer piped' },
    stop: () => helper.stop(),
  };
}
