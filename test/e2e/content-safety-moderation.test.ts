import { Decimal } from 'decimal.js';
import OpenAI from 'openai';
import type pg from 'pg';
import type { AttemptFinished, RequestAdmitted, RequestCompleted, RequestRejected } from '../../events/request-events.js';
import { contentPolicyProblems } from '../../modules/content-safety/index.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { AdminClient } from '../support/admin-client.js';
import { type ScratchClickHouse, scratchClickHouse } from '../support/clickhouse.js';
import { mockProviderYaml } from '../support/anthropic-yaml.js';
import { type TestGateway, postJson, startPostgresGateway, startTestGateway } from '../support/gateway-harness.js';
import { requireService } from '../support/services.js';

/**
 * Remote checks of a content policy (issue 36 item 6, second half): a moderation check through one of the gateway's
 * own aliases, answered here by the mock's `/v1/moderations` (flagged when an input holds MODERATION_FLAG, or
 * MODERATION_FLAG:<category> for that category alone). The check is a request of its own: its own request stream
 * (operation `moderation`, caused by the checked request), billed on its own ledger row to the checked request's
 * tenant and key. Flagged → 400 (input) or the buffered answer withheld (output); the alias's provider down →
 * fail-open lets the request through (counted), fail-closed refuses it (503 guardrail_unavailable).
 */
const baseUrl = requireService('DATABASE_URL');
const clickhouseUrl = requireService('CLICKHOUSE_URL');
const describeWithPostgres = baseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'sy-admin-content-safety-moderation-0123456789';
const MODERATION_MODEL = 'omni-moderation-upstream';
/** A second tenant whose hard budget (a millionth of a dollar) is smaller than any moderation call's estimate. */
const BROKE_KEY_ENV = 'SY_TEST_MODERATION_BROKE_KEY';
const BROKE_KEY = generateApiKey();

function moderationYaml(mockUrl: string, keyEnv: string): string {
  return `
providers:
${mockProviderYaml('mock-openai', 'openai-compatible', `${mockUrl}/v1`)}deployments:
  - id: gpt-primary
    provider: mock-openai
    model: gpt-upstream
    capabilities: [chat, streaming]
    contextWindow: 128000
    maxOutputTokens: 16384
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
  - id: moderation-primary
    provider: mock-openai
    model: ${MODERATION_MODEL}
    capabilities: [moderation]
    contextWindow: 32768
    price: { inputPer1M: "1.00", outputPer1M: "0" }
  - id: embed-primary
    provider: mock-openai
    model: text-embedding-3-small
    capabilities: [embeddings]
    contextWindow: 8191
    price: { inputPer1M: "0.02", outputPer1M: "0" }
contentPolicies:
  - id: moderated
    moderation: { alias: moderator, directions: [input, output], timeoutMs: 2000 }
  - id: moderated-open
    moderation: { alias: moderator, failOpen: true, timeoutMs: 1000 }  # retries of a 500 fit in it on a loaded machine; the 2 s provider of the timeout test does not
  - id: violence-only
    moderation: { alias: moderator, categories: [violence] }
aliases:
  - name: moderator
    routes:
      - { deployment: moderation-primary, priority: 0 }
${['checked:moderated', 'open:moderated-open', 'violence:violence-only'].map((pair) => {
    const [name, policy] = pair.split(':');
    return `  - name: ${name}\n    contentPolicy: ${policy}\n    routes:\n      - { deployment: gpt-primary, priority: 0 }\n`;
  }).join('')}  - name: embed-checked
    contentPolicy: moderated
    routes:
      - { deployment: embed-primary, priority: 0 }
tenants:
  - id: acme
  - id: broke
    budget: { monthlyUsd: "0.000001", enforcement: hard }
apiKeys:
  - id: acme-app
    tenant: acme
    key: env:${keyEnv}
    scopes: [inference, models:read]
  - id: broke-app
    tenant: broke
    key: env:${BROKE_KEY_ENV}
    scopes: [inference]
`;
}

interface StoredEvent {
  stream_id: string;
  event_type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

describeWithPostgres('remote checks: moderation through a gateway alias (PostgreSQL)', () => {
  let gw: TestGateway & { sql: pg.Client };
  let openai: OpenAI;
  let admin: AdminClient;
  let ch: ScratchClickHouse | null = null;

  beforeAll(async () => {
    process.env[BROKE_KEY_ENV] = BROKE_KEY;
    ch = clickhouseUrl ? scratchClickHouse(clickhouseUrl) : null;
    gw = await startPostgresGateway(baseUrl!, { yaml: moderationYaml, environment: { adminToken: ADMIN_TOKEN, ...(ch ? { clickhouseUrl: ch.url } : {}) } });
    openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: gw.key, maxRetries: 0 });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await ch?.drop();
  });
  beforeEach(() => {
    gw.mock.clearScenarios();
    gw.mock.clearRequests();
  });

  const ask = (model: string, content: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();
  const refusal = async (model: string, content: string) => {
    const error = await ask(model, content).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    return error as InstanceType<typeof OpenAI.APIError>;
  };
  const requestIdOf = (error: InstanceType<typeof OpenAI.APIError>) => error.headers?.get('x-request-id') as string;
  const sent = (format: string) => gw.mock.requests().filter((r) => r.format === format);
  /** The events of the requests the checked request caused (its moderation calls), committed before the answer. */
  const causedBy = async (requestId: string): Promise<StoredEvent[]> =>
    (await gw.sql.query(`SELECT stream_id, event_type, data, metadata FROM events WHERE metadata->>'causationId' = $1 ORDER BY global_position`, [requestId])).rows as StoredEvent[];
  // A refusal's RequestRejected is committed after the answer (default durability): wait for it, briefly.
  const recorded = async (requestId: string) => {
    for (let tries = 0; ; tries++) {
      const events = await gw.requestEvents(requestId);
      if (events.length > 0 || tries >= 50) return events;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  describe('unhappy configuration first: refused when applied, nothing changes', () => {
    test('an alias that does not exist: 422 naming moderation.alias, nothing defined', async () => {
      const response = await admin.put('/content-policies/unknown-moderator', { moderation: { alias: 'no-such-alias' } });
      expect(response.status).toBe(422);
      expect(response.json.error).toMatchObject({ code: 'invalid_content_policy', message: expect.stringMatching(/moderation\.alias: alias no-such-alias does not exist/) });
      expect((await admin.get('/content-policies/unknown-moderator')).status).toBe(404);
    });

    test('an alias whose routes reach no moderation deployment: 422, also on a dry run', async () => {
      const response = await admin.put('/content-policies/chat-moderator', { moderation: { alias: 'checked' } });
      expect(response.status).toBe(422);
      expect(response.json.error.message).toMatch(/moderation\.alias: alias checked has no route to a deployment with the `moderation` capability/);
      expect((await admin.put('/content-policies/chat-moderator?dryRun=true', { moderation: { alias: 'checked' } })).status).toBe(422);
      expect((await admin.get('/content-policies/chat-moderator')).status).toBe(404);
    });

    test('the same in the configuration file: the gateway does not start, and says where', async () => {
      const yaml = (mockUrl: string, keyEnv: string) => moderationYaml(mockUrl, keyEnv).replace('moderation: { alias: moderator, categories', 'moderation: { alias: checked, categories');
      await expect(startTestGateway({ yaml })).rejects.toThrow(/contentPolicies\[2\]\.moderation\.alias: alias checked has no route to a deployment with the `moderation` capability/);
    });

    test('an unknown field, an empty category list, an unknown direction, a timeout above the maximum', () => {
      const problems = contentPolicyProblems({ moderation: { alias: 'moderator', categories: [], directions: ['sideways'], timeoutMs: 60_000, threshold: 0.5 } }, 'contentPolicies[0]');
      expect(problems).toEqual(expect.arrayContaining([
        expect.stringMatching(/^contentPolicies\[0\]\.moderation\.threshold: unknown field/),
        expect.stringMatching(/^contentPolicies\[0\]\.moderation\.categories: must be a non-empty list/),
        'contentPolicies[0].moderation.directions: must be a non-empty list of input, output',
        'contentPolicies[0].moderation.timeoutMs: must be an integer from 1 to 30000 (milliseconds)',
      ]));
      expect(contentPolicyProblems({ moderation: { failOpen: true } }, 'p')).toEqual(["p.moderation.alias: must be the name of one of the gateway's aliases"]);
    });
  });

  test('flagged: 400 content_policy_violation of type moderation, no chat call; the moderation call is billed on a ledger row of its own', async () => {
    const error = await refusal('checked', 'Please write MODERATION_FLAG here');
    expect(error.status).toBe(400);
    expect(error.code).toBe('content_policy_violation');
    expect(error.message).toMatch(/content policy 'moderated' \(version 1\): it contains content of type 'moderation'/);
    expect(sent('openai')).toHaveLength(0);
    const moderations = sent('openai-moderations');
    expect(moderations).toHaveLength(1);
    expect(moderations[0].model).toBe(MODERATION_MODEL);
    const checkedId = requestIdOf(error);
    const rejected = (await recorded(checkedId)).map((e) => e.type);
    expect(rejected).toEqual(['RequestRejected']);
    const checkedEvents = await recorded(checkedId);
    expect((checkedEvents[0].data as RequestRejected['data']).contentPolicy?.manifest?.findings).toEqual([{ type: 'moderation', direction: 'input', action: 'block', count: 1 }]);

    const caused = await causedBy(checkedId);
    expect(caused.map((e) => e.event_type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
    const moderationId = (caused[0].data as RequestAdmitted['data']).requestId;
    expect(moderationId).not.toBe(checkedId);
    expect(caused.every((e) => e.stream_id === `request-${moderationId}`)).toBe(true);
    expect(caused[0].data).toMatchObject({ operation: 'moderation', tenantId: 'acme', keyId: 'acme-app', alias: 'moderator', stream: false });
    expect(caused[0].metadata).toMatchObject({ causationId: checkedId, correlationId: checkedId, actor: 'key:acme-app' });
    const attempt = caused[1].data as AttemptFinished['data'];
    expect(attempt).toMatchObject({ requestId: moderationId, attempt: 1, deploymentId: 'moderation-primary', outcome: 'success', usageEvidence: 'estimated' });
    expect(attempt.usage.input).toBeGreaterThan(0);
    expect(Number(attempt.cost.total)).toBeGreaterThan(0);
    expect(Number(attempt.cost.output)).toBe(0);
    expect(caused[2].data).toMatchObject({ status: 'success', totals: { attempts: 1 } });
    expect(Number((caused[2].data as RequestCompleted['data']).totals.costUsd)).toBe(Number(attempt.cost.total));

    await gw.gateway.platform.runner.catchUp(['cost-ledger']);
    const { rows } = await gw.sql.query(`SELECT request_id, attempt, tenant_id, key_id, deployment_id, cost_usd::text AS cost FROM cost_ledger WHERE request_id IN ($1, $2)`, [checkedId, moderationId]);
    expect(rows).toEqual([{ request_id: moderationId, attempt: 1, tenant_id: 'acme', key_id: 'acme-app', deployment_id: 'moderation-primary', cost: expect.any(String) }]);
    expect(Number(rows[0].cost)).toBe(Number(attempt.cost.total));
  });

  test('not flagged: answered; the moderation call was billed, the chat request has its own attempt', async () => {
    const { data, response } = await ask('checked', 'A quiet afternoon');
    expect(response.status).toBe(200);
    expect(data.choices[0].message.content).toBeTruthy();
    // The input, then the buffered answer (directions: [input, output]).
    expect(sent('openai-moderations')).toHaveLength(2);
    expect(sent('openai')).toHaveLength(1);
    const checkedId = response.headers.get('x-request-id')!;
    const caused = await causedBy(checkedId);
    expect(caused.filter((e) => e.event_type === 'RequestAdmitted')).toHaveLength(2);
    expect(caused.filter((e) => e.event_type === 'RequestCompleted').every((e) => (e.data as RequestCompleted['data']).status === 'success')).toBe(true);
    const own = await recorded(checkedId);
    expect(own.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
    expect((own[1].data as AttemptFinished['data']).deploymentId).toBe('gpt-primary');
  });

  test('output: a flagged buffered answer is withheld; the chat attempt is billed, RequestCompleted records the block', async () => {
    gw.mock.addScenario({ model: 'gpt-upstream', behaviour: { text: 'Here it is: MODERATION_FLAG' } });
    const blocked = await refusal('checked', 'Say the word');
    expect(blocked.status).toBe(400);
    expect(blocked.message).toMatch(/The answer was blocked by content policy 'moderated' \(version 1\): the model produced content of type 'moderation'/);
    expect(sent('openai')).toHaveLength(1);
    expect(sent('openai-moderations')).toHaveLength(2);
    const events = await recorded(requestIdOf(blocked));
    expect(events.map((e) => e.type)).toEqual(['RequestAdmitted', 'AttemptFinished', 'RequestCompleted']);
    expect((events[2].data as RequestCompleted['data']).contentPolicy?.findings).toEqual([{ type: 'moderation', direction: 'output', action: 'block', count: 1 }]);
  });

  test('a streamed request and the Anthropic format are moderated on input too: refused before anything is sent, in the client format', async () => {
    const streamed = await openai.chat.completions.create({ model: 'checked', stream: true, messages: [{ role: 'user', content: 'MODERATION_FLAG' }] }).catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError);
    expect((streamed as InstanceType<typeof OpenAI.APIError>).code).toBe('content_policy_violation');
    const anthropic = await postJson(gw, '/v1/messages', { model: 'checked', max_tokens: 64, system: 'MODERATION_FLAG in the system prompt', messages: [{ role: 'user', content: 'Hi' }] });
    expect(anthropic.status).toBe(400);
    expect(anthropic.json).toMatchObject({ type: 'error', error: { message: expect.stringMatching(/content of type 'moderation'/) } });
    expect(sent('openai')).toHaveLength(0);
    expect(sent('openai-moderations')).toHaveLength(2);
  });

  test('embeddings inputs are moderated too: flagged → 400, nothing embedded', async () => {
    const error = await openai.embeddings.create({ model: 'embed-checked', input: ['fine', 'MODERATION_FLAG'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('content_policy_violation');
    expect(sent('openai-embeddings')).toHaveLength(0);
    expect(sent('openai-moderations')).toHaveLength(1);
    expect(sent('openai-moderations')[0].body).toMatchObject({ model: MODERATION_MODEL, input: ['fine', 'MODERATION_FLAG'] });
  });

  test('a spent hard budget: 402 budget_exceeded before any moderation call is bought', async () => {
    const broke = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: BROKE_KEY, maxRetries: 0 });
    const error = await broke.chat.completions.create({ model: 'checked', messages: [{ role: 'user', content: 'Hello there' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect(gw.mock.requests()).toHaveLength(0);
    const checkedId = requestIdOf(error as InstanceType<typeof OpenAI.APIError>);
    expect((await recorded(checkedId)).map((e) => e.type)).toEqual(['RequestRejected']);
    expect(await causedBy(checkedId)).toEqual([]);
  });

  test('categories: only the listed ones block', async () => {
    const { response } = await ask('violence', 'About MODERATION_FLAG:self-harm');
    expect(response.status).toBe(200);
    const error = await refusal('violence', 'About MODERATION_FLAG:violence');
    expect(error.status).toBe(400);
    expect(error.code).toBe('content_policy_violation');
  });

  // Before the provider-down tests below: their failures open the moderation deployment's breaker.
  test('bounded by its timeout: a moderation provider slower than timeoutMs gives no verdict (fail-open here), and the request goes on', async () => {
    gw.mock.addScenario({ model: MODERATION_MODEL, behaviour: { latencyMs: 2_000 } });
    const { response } = await ask('open', 'Hello there');
    expect(response.status).toBe(200);
    expect(sent('openai')).toHaveLength(1);
    const caused = await causedBy(response.headers.get('x-request-id')!);
    expect(caused.at(-1)).toMatchObject({ event_type: 'RequestCompleted', data: { status: 'failed' } });
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/switchyard_guardrail_check_errors_total\{policy="moderated-open",check="moderation",reason="timeout",resolution="fail_open"\} [1-9]/);
  });

  describe('the moderation provider down: fail-closed refuses, fail-open lets through (counted)', () => {
    test('fail-closed: 503 guardrail_unavailable, no chat call, RequestRejected; the failed attempts bill nothing', async () => {
      gw.mock.addScenario({ model: MODERATION_MODEL, behaviour: { status: 500 } });
      const error = await refusal('checked', 'Hello there');
      expect(error.status).toBe(503);
      expect(error.code).toBe('guardrail_unavailable');
      expect(error.message).toMatch(/moderation check of content policy 'moderated'/);
      expect(sent('openai')).toHaveLength(0);
      expect(sent('openai-moderations').length).toBeGreaterThanOrEqual(1);
      const checkedId = requestIdOf(error);
      const events = await recorded(checkedId);
      expect(events.map((e) => e.type)).toEqual(['RequestRejected']);
      expect(events[0].data).toMatchObject({ status: 503, code: 'guardrail_unavailable' });
      const caused = await causedBy(checkedId);
      expect(caused.at(-1)).toMatchObject({ event_type: 'RequestCompleted', data: { status: 'failed' } });
      expect(Number((caused.at(-1)!.data as RequestCompleted['data']).totals.costUsd)).toBe(0);
    });

    test('fail-open: answered, and the manifest counts the unchecked pass', async () => {
      gw.mock.addScenario({ model: MODERATION_MODEL, behaviour: { status: 500 } });
      const { response } = await ask('open', 'Hello there');
      expect(response.status).toBe(200);
      expect(sent('openai')).toHaveLength(1);
      const events = await recorded(response.headers.get('x-request-id')!);
      const admitted = events.find((e) => e.type === 'RequestAdmitted')!.data as RequestAdmitted['data'];
      expect(admitted.contentPolicy?.manifest?.findings).toEqual([{ type: 'moderation', direction: 'input', action: 'allow', count: 1 }]);
    });
  });

  // Reads what the tests above billed: it runs last, in file order.
  (clickhouseUrl ? test : test.skip)('ledger = ClickHouse, row for row, moderation requests included', async () => {
    await gw.gateway.platform.committer.drain();
    await gw.gateway.platform.runner.catchUp(['cost-ledger', 'clickhouse-analytics']);
    const ledgerRows = (await gw.sql.query(
      `SELECT request_id, attempt, alias, cost_usd::text AS cost_usd, input_tokens::text AS input_tokens FROM cost_ledger ORDER BY request_id, attempt`,
    )).rows as Array<{ request_id: string; attempt: number; alias: string; cost_usd: string; input_tokens: string }>;
    expect(ledgerRows.filter((row) => row.alias === 'moderator').length).toBeGreaterThanOrEqual(5);
    const chRows = await ch!.rows<{ request_id: string; attempt: number; alias: string; cost_usd: string; input_tokens: string }>(
      `SELECT request_id, attempt, alias, toString(cost_usd) AS cost_usd, toString(input_tokens) AS input_tokens FROM ${ch!.database}.attempts WHERE billable = 1 ORDER BY request_id, attempt`,
    );
    const exact = (rows: typeof ledgerRows) => rows.map((row) => ({ ...row, cost_usd: new Decimal(row.cost_usd).toString() }));
    expect(exact(chRows)).toEqual(exact(ledgerRows));
  });

  // Reads what the tests above counted: it runs last, in file order.
  test('latency and errors are in /metrics per policy with check="moderation", never a text', async () => {
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/switchyard_guardrail_check_errors_total\{policy="moderated-open",check="moderation",reason="unavailable",resolution="fail_open"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_guardrail_check_errors_total\{policy="moderated",check="moderation",reason="unavailable",resolution="fail_closed"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_guardrail_check_duration_seconds_count\{policy="moderated",check="moderation",outcome="block"\} [1-9]/);
    // Each moderation call is also a request of its own in the per-request metrics: operation `moderation`, its alias,
    // the status it settled with (answered, or failed on an unavailable provider).
    expect(metrics).toMatch(/switchyard_requests_total\{operation="moderation",alias="[^"]+",status_class="2xx"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_requests_total\{operation="moderation",alias="[^"]+",status_class="5xx"\} [1-9]/);
    expect(metrics).toMatch(/switchyard_request_duration_seconds_count\{operation="moderation",alias="[^"]+",status_class="2xx"\} [1-9]/);
    expect(metrics).not.toMatch(/MODERATION_FLAG|Hello there/);
  });
});
