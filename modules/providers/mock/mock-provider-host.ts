import { MockProviderServer } from './mock-provider-server.js';

/**
 * Provider `type: mock` runs inside the gateway process: the first deployment that needs it starts a
 * mock server on an ephemeral loopback port, and the normal OpenAI-compatible path calls it.
 */
export class MockProviderHost {
  private server: MockProviderServer | null = null;
  private baseUrl: Promise<string> | null = null;

  url(): Promise<string> {
    if (!this.baseUrl) {
      this.server = new MockProviderServer();
      this.baseUrl = this.server.listen(0, '127.0.0.1').then((origin) => `${origin}/v1`);
    }
    return this.baseUrl;
  }

  /** The in-process server (for tests that inject faults into the built-in mock). */
  instance(): MockProviderServer | null {
    return this.server;
  }

  async close(): Promise<void> {
    await this.server?.close();
    this.server = null;
    this.baseUrl = null;
  }
}
