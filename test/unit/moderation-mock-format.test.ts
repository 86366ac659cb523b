import OpenAI from 'openai';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';

/**
 * The mock's OpenAI moderations endpoint (issue 36 item 6): flagged when an input holds the marker word, with the
 * categories OpenAI reports, read by the official SDK as it reads OpenAI's own answers.
 */
describe('mock provider: OpenAI moderations', () => {
  let mock: MockProviderServer;
  let openai: OpenAI;

  beforeAll(async () => {
    mock = new MockProviderServer();
    openai = new OpenAI({ baseURL: `${await mock.listen(0)}/v1`, apiKey: 'test-key-0123456789', maxRetries: 0 });
  });
  afterAll(async () => {
    await mock.close();
  });
  beforeEach(() => {
    mock.clearScenarios();
    mock.clearRequests();
    mock.moderationMarker = 'MODERATION_FLAG';
  });

  test('bad input first: no input is a 400 in the OpenAI format, and is logged as such', async () => {
    const error = await openai.moderations.create({ model: 'omni-moderation-latest', input: [] as unknown as string }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toMatch(/'input' must be a string or an array of strings/);
    expect(mock.requests()[0]).toMatchObject({ format: 'openai-moderations', outcome: 'error-status' });
  });

  test('an input without the marker passes; one with it is flagged (violence, harassment), one result per input', async () => {
    const answer = await openai.moderations.create({ model: 'omni-moderation-latest', input: ['a quiet afternoon', 'MODERATION_FLAG here'] });
    expect(answer.model).toBe('omni-moderation-latest');
    expect(answer.results.map((result) => result.flagged)).toEqual([false, true]);
    expect(answer.results[0].categories.violence).toBe(false);
    expect(answer.results[1].categories).toMatchObject({ violence: true, harassment: true, hate: false });
    expect(answer.results[1].category_scores.violence).toBeGreaterThan(0.9);
    expect(mock.requests()[0]).toMatchObject({ format: 'openai-moderations', model: 'omni-moderation-latest', outcome: 'completed' });
  });

  test('the marker can name one category, and the marker word itself is configurable', async () => {
    const named = await openai.moderations.create({ model: 'omni-moderation-latest', input: 'MODERATION_FLAG:self-harm' });
    expect(named.results[0].categories).toMatchObject({ 'self-harm': true, violence: false });
    mock.moderationMarker = 'FORBIDDEN';
    const moved = await openai.moderations.create({ model: 'omni-moderation-latest', input: ['MODERATION_FLAG', 'FORBIDDEN words'] });
    expect(moved.results.map((result) => result.flagged)).toEqual([false, true]);
  });

  test('status faults apply as for chat', async () => {
    mock.addScenario({ behaviour: { status: 503 } });
    const error = await openai.moderations.create({ model: 'omni-moderation-latest', input: 'anything' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
  });
});
