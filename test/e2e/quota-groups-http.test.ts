import type { AttemptFinished, RequestCompleted } from '../../events/index.js';
import { type TestGateway, defaultYaml, postJson, startTestGateway } from '../support/gateway-harness.js';

/**
 * Deployment quota groups over HTTP: the provider quota is charged on the deployment an attempt actually
 * goes to. Alias `chat` routes primary (group-a) then backup (group-b), each group one request a minute.
 */
describe('deployment quota groups are charged where the attempts go', () => {
  let gw: TestGateway;
  const yaml = (mockUrl: string, keyEnv: string) =>
    defaultYaml(mockUrl, keyEnv)
      .replace('    model: model-primary\n', '    model: model-primary\n    quotaGroup: group-a\n    limits: { rpm: 1 }\n')
      .replace('    model: model-backup\n', '    model: model-backup\n    quotaGroup: group-b\n    limits: { rpm: 1 }\n');

  beforeAll(async () => {
    gw = await startTestGateway({ yaml });
  }, 60_000);
  afterAll(() => gw?.close());

  const body = { model: 'chat', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] };
  const attemptsOf = async (requestId: string) =>
    (await gw.requestEvents(requestId)).filter((e) => e.type === 'AttemptFinished').map((e) => e.data as AttemptFinished['data']);

  test("the first group exhausted: served by the second route, whose group is charged; both exhausted: 429 naming a quota group", async () => {
    const first = await postJson(gw, '/v1/chat/completions', body);
    expect(first.status).toBe(200);
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['model-primary']);

    // group-a has no room left: the planned first route is passed over without a call, and backup serves.
    const second = await postJson(gw, '/v1/chat/completions', body);
    expect(second.status).toBe(200);
    expect(gw.mock.requests().map((r) => r.model)).toEqual(['model-primary', 'model-backup']);
    const attempts = await attemptsOf(second.headers.get('x-request-id')!);
    expect(attempts.map((a) => [a.deploymentId, a.outcome])).toEqual([['backup', 'success']]);
    expect(attempts[0].routing.reason).toContain('passing over chat#1 (quota_group_exhausted)');

    // Now group-b is used as well (it was charged by the attempt that went there): nothing is left.
    const third = await postJson(gw, '/v1/chat/completions', body);
    expect(third.status).toBe(429);
    expect(third.json.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited', scope: expect.stringMatching(/^quota_group:group-[ab]$/), limit_type: 'requests' });
    expect(third.json.error.message).toContain("deployment quota group 'group-a'");
    expect(third.json.error.message).toContain("deployment quota group 'group-b'");
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(gw.mock.requests()).toHaveLength(2); // no provider was called for it
    const events = await gw.requestEvents(third.headers.get('x-request-id')!);
    expect(events.filter((e) => e.type === 'AttemptFinished')).toHaveLength(0);
    expect(events.at(-1)!.data as RequestCompleted['data']).toMatchObject({ status: 'failed', httpStatus: 429 });

    // The Anthropic format gets its own rate-limit error for the same refusal.
    const anthropic = await postJson(gw, '/v1/messages', body, { 'anthropic-version': '2023-06-01' });
    expect(anthropic.status).toBe(429);
    expect(anthropic.json).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringContaining('quota group') } });
  });
});
