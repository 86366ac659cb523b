import type { DurabilityProfile } from '../../modules/inference/pipeline/durability.js';
import { postJson, startTestGateway } from '../support/gateway-harness.js';

/**
 * SWITCHYARD_DURABILITY through the real gateway (DESIGN §7): how many commits one request takes, and
 * that every profile leaves the same events behind. The journal's own suite covers retries and timing.
 */
describe.each([
  ['default', 1],
  ['strict', 2],
  ['async', 1],
] as const)('durability profile %s', (profile: DurabilityProfile, commits: number) => {
  test(`a buffered and a streamed request each commit ${commits === 1 ? 'once' : 'twice (RequestAdmitted first)'}`, async () => {
    const gw = await startTestGateway({ environment: { durability: profile } });
    try {
      for (const stream of [false, true]) {
        const response = await postJson(gw, '/v1/chat/completions', { model: 'chat', stream, messages: [{ role: 'user', content: 'hi' }] });
        expect(response.status).toBe(200);
        const requestId = response.headers.get('x-request-id')!;
        await gw.gateway.platform.committer.drain();
        const events = await gw.requestEvents(requestId);
        expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
        expect(events.map((e) => e.streamVersion)).toEqual([1, 2, 3]);
        expect(new Set(events.map((e) => e.transactionId)).size).toBe(commits);
      }
    } finally {
      await gw.close();
    }
  });
});
