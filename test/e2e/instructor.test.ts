import Instructor from '@instructor-ai/instructor';
import OpenAI from 'openai';
// Instructor 1.7 converts schemas with zod-to-json-schema, which reads zod 3 schemas: zod 4's v3 API is that.
import { z } from 'zod/v3';
import { type TestGateway, startTestGateway } from '../support/gateway-harness.js';
import { SURVEY_CREDENTIALS_ENV, surveyYaml } from '../support/survey-yaml.js';

const Weather = z.object({ city: z.string(), celsius: z.number() });
/** What the mock fills in for Weather's JSON Schema (mock-script.ts sampleFor). */
const PLANNED = { city: 'Paris', celsius: 42 };
const ask = [{ role: 'user' as const, content: 'Weather in Paris' }];

/**
 * Instructor (`@instructor-ai/instructor` 1.7 over the OpenAI SDK, pinned by package-lock) against every
 * provider format: structured extraction in TOOLS mode (a forced function call) and JSON_SCHEMA mode
 * (`response_format: {type: "json_object", schema}`, the Together/Fireworks dialect), buffered and streamed as
 * partial objects. FUNCTIONS mode uses OpenAI's retired `functions`/`function_call` and is refused by name.
 */
describe('Instructor', () => {
  let gw: TestGateway;
  let client: ReturnType<typeof instructor>;

  function instructor(mode: 'TOOLS' | 'JSON_SCHEMA' | 'FUNCTIONS') {
    return Instructor({ client: new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 }), mode });
  }
  async function extract(model: string, mode: 'TOOLS' | 'JSON_SCHEMA' | 'FUNCTIONS'): Promise<unknown> {
    client = instructor(mode);
    const { _meta: _, ...data } = await client.chat.completions.create({ model, messages: ask, response_model: { schema: Weather, name: 'Weather' }, max_retries: 0 });
    return data;
  }
  async function extractStreamed(model: string, mode: 'TOOLS' | 'JSON_SCHEMA'): Promise<{ partials: number; last: unknown }> {
    client = instructor(mode);
    let partials = 0;
    let last: unknown;
    for await (const partial of await client.chat.completions.create({ model, messages: ask, response_model: { schema: Weather, name: 'Weather' }, stream: true, max_retries: 0 })) {
      partials++;
      const { _meta: _, ...data } = partial;
      last = data;
    }
    return { partials, last };
  }

  beforeAll(async () => {
    process.env[SURVEY_CREDENTIALS_ENV] = 'AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
    gw = await startTestGateway({ yaml: surveyYaml });
  });
  afterAll(async () => {
    await gw.close();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  describe('TOOLS mode: a function call forced by name', () => {
    for (const model of ['gpt', 'claude', 'gemini', 'bedrock']) {
      test(`${model}: buffered and streamed, the partials end in the planned object`, async () => {
        expect(await extract(model, 'TOOLS')).toEqual(PLANNED);
        const streamed = await extractStreamed(model, 'TOOLS');
        expect(streamed.last).toEqual(PLANNED);
        // Providers that stream arguments in pieces give several partials; Gemini sends each call whole.
        if (model !== 'gemini') expect(streamed.partials).toBeGreaterThan(1);
        const upstream = gw.mock.requests();
        expect(upstream).toHaveLength(2);
        const body = JSON.stringify(upstream[0].body);
        expect(body).toContain('"Weather"');
        if (model === 'claude') expect(upstream[0].body).toMatchObject({ tool_choice: { type: 'tool', name: 'Weather' } });
        if (model === 'bedrock') expect(upstream[0].body).toMatchObject({ toolConfig: { toolChoice: { tool: { name: 'Weather' } } } });
      });
    }
  });

  describe('JSON_SCHEMA mode: JSON mode with a schema becomes a json_schema request', () => {
    for (const model of ['gpt', 'claude', 'gemini']) {
      test(`${model}: buffered and streamed; the schema reaches the route in its own terms`, async () => {
        expect(await extract(model, 'JSON_SCHEMA')).toEqual(PLANNED);
        const streamed = await extractStreamed(model, 'JSON_SCHEMA');
        expect(streamed.last).toEqual(PLANNED);
        expect(streamed.partials).toBeGreaterThan(1);
        const body = gw.mock.requests()[0].body as Record<string, any>;
        if (model === 'gpt') expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'response', schema: { properties: { celsius: { type: 'number' } } } } });
        if (model === 'claude') expect(body.output_config).toMatchObject({ format: { type: 'json_schema', schema: { required: ['city', 'celsius'] } } });
        if (model === 'gemini') expect(body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseSchema: { required: ['city', 'celsius'] } });
      });
    }

    test('bedrock: Converse has no JSON mode, so the request is refused naming response_format, nothing sent', async () => {
      const error = await extract('bedrock', 'JSON_SCHEMA').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'response_format' });
      expect(gw.mock.requests()).toHaveLength(0);
    });
  });

  test('FUNCTIONS mode (OpenAI\'s retired functions/function_call): a 400 naming the parameter, nothing sent', async () => {
    const error = await extract('gpt', 'FUNCTIONS').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter' });
    expect(['functions', 'function_call']).toContain((error as InstanceType<typeof OpenAI.APIError>).param);
    expect(gw.mock.requests()).toHaveLength(0);
  });
});
