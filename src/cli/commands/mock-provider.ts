import { DEFAULT_BEHAVIOUR, type MockBehaviour } from '../../../modules/providers/mock/mock-behaviour.js';
import { MockProviderServer } from '../../../modules/providers/mock/mock-provider-server.js';

export async function mockProvider(options: { port: number; host: string; behaviour: Partial<MockBehaviour> }): Promise<void> {
  const server = new MockProviderServer({ ...DEFAULT_BEHAVIOUR, ...options.behaviour });
  const url = await server.listen(options.port, options.host);
  process.stdout.write(
    `Mock provider on ${url}\n` +
      `  OpenAI-compatible: POST ${url}/v1/chat/completions (buffered and SSE)\n` +
      `  Control: POST ${url}/__mock/scenarios, GET ${url}/__mock/requests\n`,
  );
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
