import pg from 'pg';
import { BEDROCK_CREDENTIALS, BEDROCK_CREDENTIALS_ENV, PROVIDER_FORMATS, type ProviderFormat, conformanceYaml } from '../support/conformance.js';
import { type TestGateway, sseData, startPostgresGateway } from '../support/gateway-harness.js';
import { requireService } from '../support/services.js';

/**
 * Issue 32, items 1–3: a provider's usage is a claim, and no claim of any provider format can make the
 * gateway answer 500, cut a stream, bill a negative or absurd amount, or stop the ledger. Every provider
 * format (on the test's mock, which writes the given raw fields over the usage it reports), buffered and
 * streamed, on PostgreSQL: the client gets its answer (with the counts it is billed), the stream ends
 * with [DONE], every request is billed within the plausible bound, the cost ledger is at the head, and
 * a rebuild gives the same rows.
 */
const baseUrl = requireService('DATABASE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'sy-admin-usage-trust-0123456789abcdef';

/** The provider's own names of its input and output counts. */
const FIELDS: Record<ProviderFormat['mockFormat'], { input: string; output: string }> = {
  openai: { input: 'prompt_tokens', output: 'completion_tokens' },
  anthropic: { input: 'input_tokens', output: 'output_tokens' },
  gemini: { input: 'promptTokenCount', output: 'candidatesTokenCount' },
  bedrock: { input: 'inputTokens', output: 'outputTokens' },
};

/** Values a careless provider has been seen to send (1e400 cannot be written by JSON.stringify: the raw-server case below). */
const BAD_VALUES: Array<[string, unknown]> = [
  ['negative', -1_000_000],
  ['fractional', 10.7],
  ['a numeric string', '100'],
  ['the string NaN', 'NaN'],
  ['1e308', 1e308],
  ['2e9', 2e9],
  ['null (absent)', null],
];

/** The deployments of conformanceYaml: context window 128,000, maximum output 8,192 tokens. */
const CONTEXT_WINDOW = 128_000;
const MAX_OUTPUT = 8_192;
/** chatUsageBound for these requests (n = 1, no max_tokens): the window (the estimate is tiny) and twice the maximum output, each plus 1,024. */
const INPUT_BOUND = CONTEXT_WINDOW + 1024;
const OUTPUT_BOUND = 2 * MAX_OUTPUT + 1024;

interface Case {
  provider: ProviderFormat;
  field: 'input' | 'output';
  name: string;
  value: unknown;
  stream: boolean;
  /** Gemini reports no candidatesTokenCount for an answer that produced nothing: its absence is 0, not a gap. */
  believable: boolean;
}

const CASES: Case[] = PROVIDER_FORMATS.flatMap((provider) =>
  (['input', 'output'] as const).flatMap((field) =>
    BAD_VALUES.flatMap(([name, value]) =>
      [false, true].map((stream) => ({
        provider, field, name, value, stream,
        believable: provider.mockFormat === 'gemini' && field === 'output' && value === null,
      })),
    ),
  ),
);

interface Sent {
  requestId: string;
  case: Case;
}

describeWithPostgres('a provider whose usage cannot be believed, in every provider format, buffered and streamed (PostgreSQL)', () => {
  let gw: TestGateway & { sql: pg.Client };
  let sql: pg.Client;
  const sent: Sent[] = [];

  beforeAll(async () => {
    process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
    gw = await startPostgresGateway(baseUrl!, { yaml: conformanceYaml, environment: { adminToken: ADMIN_TOKEN } });
    sql = gw.sql;
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
  });

  test.each(CASES.map((c) => [c.provider.type, c.field, c.name, c.stream ? 'streamed' : 'buffered', c] as const))(
    '%s: %s count %s, %s → the answer is whole, its usage counts are non-negative integers within the bound',
    async (_type, _field, _name, _mode, c) => {
      gw.mock.addScenario({ model: c.provider.model, times: 1, behaviour: { usageFields: { [FIELDS[c.provider.mockFormat][c.field]]: c.value } } });
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: c.provider.alias,
          messages: [{ role: 'user', content: 'Say hello' }],
          ...(c.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        }),
      });
      const text = await response.text();
      expect(response.status).toBe(200);
      const requestId = response.headers.get('x-request-id')!;
      sent.push({ requestId, case: c });
      let usage: { prompt_tokens: number; completion_tokens: number };
      if (c.stream) {
        const frames = sseData(text);
        // A complete stream: the usage frame the client asked for, then the end marker — never cut short.
        expect(frames.at(-1)).toBe('[DONE]');
        const payloads = frames.slice(0, -1).map((frame) => JSON.parse(frame));
        expect(payloads.some((p) => p.error)).toBe(false);
        usage = payloads.at(-1).usage;
        expect(payloads.map((p) => p.choices[0]?.delta?.content ?? '').join('').length).toBeGreaterThan(0);
      } else {
        const body = JSON.parse(text);
        expect(body.choices[0].message.content.length).toBeGreaterThan(0);
        usage = body.usage;
      }
      for (const count of [usage.prompt_tokens, usage.completion_tokens]) {
        expect(Number.isSafeInteger(count) && count >= 0).toBe(true);
      }
      expect(usage.prompt_tokens).toBeLessThanOrEqual(INPUT_BOUND);
      expect(usage.completion_tokens).toBeLessThanOrEqual(OUTPUT_BOUND);
    },
  );

  test.each(PROVIDER_FORMATS.flatMap((provider) => [false, true].map((stream) => [provider.type, stream ? 'streamed' : 'buffered', provider, stream] as const)))(
    '%s, no usage at all, %s → the answer is whole and billed at the gateway\'s count (evidence counted)',
    async (_type, _mode, provider, stream) => {
      gw.mock.addScenario({ model: provider.model, times: 1, behaviour: { usage: false } });
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: provider.alias, messages: [{ role: 'user', content: 'Say hello' }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
      });
      const text = await response.text();
      expect(response.status).toBe(200);
      if (stream) expect(sseData(text).at(-1)).toBe('[DONE]');
      await gw.gateway.platform.runner.catchUp(['cost-ledger']);
      const { rows } = await sql.query(`SELECT usage_evidence, input_tokens::int, output_tokens::int FROM cost_ledger WHERE request_id = $1`, [response.headers.get('x-request-id')]);
      expect(rows).toEqual([{ usage_evidence: 'counted', input_tokens: expect.any(Number), output_tokens: expect.any(Number) }]);
      expect(rows[0].input_tokens).toBeGreaterThan(0);
      expect(rows[0].output_tokens).toBeGreaterThan(0);
    },
  );

  test('every request is billed once, within the bound, never negative; the implausible ones say so, with the value as reported', async () => {
    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    const rows = (await sql.query(
      `SELECT request_id, input_tokens::text, output_tokens::text, cached_input_tokens::text, cost_usd::text, usage_evidence, outcome FROM cost_ledger`,
    )).rows as Array<Record<string, string>>;
    const byRequest = new Map(rows.map((row) => [row.request_id, row]));
    expect(sent).toHaveLength(CASES.length);
    for (const { requestId, case: c } of sent) {
      const row = byRequest.get(requestId);
      expect(row).toBeDefined();
      expect(row!.outcome).toBe('success');
      expect(Number(row!.input_tokens)).toBeGreaterThanOrEqual(0);
      expect(Number(row!.input_tokens)).toBeLessThanOrEqual(INPUT_BOUND);
      expect(Number(row!.output_tokens)).toBeGreaterThanOrEqual(0);
      expect(Number(row!.output_tokens)).toBeLessThanOrEqual(OUTPUT_BOUND);
      // $3 input and $15 output per million: the most a request within the bound can cost.
      expect(Number(row!.cost_usd)).toBeGreaterThanOrEqual(0);
      expect(Number(row!.cost_usd)).toBeLessThanOrEqual((INPUT_BOUND * 3 + OUTPUT_BOUND * 15) / 1e6);
      expect(row!.usage_evidence).toBe(c.believable ? 'provider' : 'implausible');
    }
    const spend = (await sql.query(`SELECT min(spent_usd)::text AS least FROM tenant_spend`)).rows[0] as { least: string };
    expect(Number(spend.least)).toBeGreaterThanOrEqual(0);

    // The request's record keeps what the provider said, as a short string, and why it was not believed.
    const negative = sent.find((s) => s.case.name === 'negative' && s.case.provider.mockFormat === 'openai' && s.case.field === 'input')!;
    const history = await fetch(`${gw.url}/admin/v1/requests/${negative.requestId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.json() as Promise<any>);
    expect(history.attempts[0].usageEvidence).toBe('implausible');
    expect(history.attempts[0].diagnostics.implausibleUsage).toEqual({ reason: 'prompt_tokens is not a non-negative integer', reported: { prompt_tokens: '-1000000' } });
    const huge = sent.find((s) => s.case.name === '2e9' && s.case.provider.mockFormat === 'anthropic' && s.case.field === 'output' && !s.case.stream)!;
    const hugeHistory = await fetch(`${gw.url}/admin/v1/requests/${huge.requestId}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.json() as Promise<any>);
    expect(hugeHistory.attempts[0].diagnostics.implausibleUsage).toEqual({ reason: `output_tokens is above the plausible ${OUTPUT_BOUND}`, reported: { output_tokens: '2000000000' } });
  });

  test('the ledger is at the head with no error; the metric counts the implausible attempts; a rebuild reproduces the ledger row for row', async () => {
    const projections = await fetch(`${gw.url}/admin/v1/projections`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.json() as Promise<any>);
    const ledger = (projections.projections ?? projections).find((p: { name: string }) => p.name === 'cost-ledger');
    expect(ledger.lastError ?? null).toBeNull();
    expect(ledger.behind ?? 0).toBe(0);

    const metrics = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text());
    const counted = metrics
      .split('\n')
      .filter((line) => line.startsWith('switchyard_provider_usage_implausible_total{'))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    expect(counted).toBe(CASES.filter((c) => !c.believable).length);

    const snapshot = async () => (await sql.query(`SELECT * FROM cost_ledger ORDER BY request_id, attempt`)).rows.map((row) => JSON.stringify({ ...row, recorded_at: String(row.recorded_at) }));
    const spend = async () => (await sql.query(`SELECT tenant_id, period, period_start::text, spent_usd::text FROM tenant_spend ORDER BY 1, 2, 3`)).rows;
    const before = await snapshot();
    const spendBefore = await spend();
    const rebuilt = await fetch(`${gw.url}/admin/v1/projections/cost-ledger/rebuild`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(rebuilt.status).toBeLessThan(300);
    // The rebuild replays in the background: wait until the ledger is whole again.
    for (let i = 0; i < 200 && (await snapshot()).length !== before.length; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    expect(await snapshot()).toEqual(before);
    expect(await spend()).toEqual(spendBefore);
  });
});
