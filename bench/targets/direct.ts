import { CHAT_PATH, type Target, chatBody } from './target.js';

/** The baseline: the client calls the mock itself. Whatever a gateway adds is measured against this. */
export function directTarget(mockUrl: string): Target {
  return {
    id: 'direct',
    kind: 'direct',
    origin: mockUrl,
    modes: ['buffered', 'sse'],
    request: (mode) => ({ path: CHAT_PATH, headers: { 'content-type': 'application/json' }, body: chatBody('bench-model', mode), stream: mode === 'sse' }),
    streamsRequest: () => ({ path: CHAT_PATH, headers: { 'content-type': 'application/json' }, body: chatBody('bench-model', 'sse'), stream: true }),
    processes: () => [],
    postgres: null,
    details: {},
    stop: async () => undefined,
  };
}
