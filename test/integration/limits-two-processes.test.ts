import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { AttemptFinished } from '../../events/request-events.js';
import { generateApiKey } from '../../modules/access/api-key/key-format.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { isBillable } from '../../projections/cost-ledger/cost-ledger.projection.js';
import { type ServerProcess, startServer } from '../support/cli-process.js';
import { sseData } from '../support/gateway-harness.js';
import { createScratchDatabase, requireService } from '../support/services.js';

const databaseUrl = requireService('DATABASE_URL');
const redisUrl = requireService('REDIS_URL');
const describeWithServices = databaseUrl && redisUrl ? describe : describe.skip;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Polls every 200 ms (the checks read the database while 20 clients load the machine). */
async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  for (const until = Date.now() + timeoutMs; !(await check()); await sleep(200)) {
    if (Date.now() > until) throw new Error(`${what} not met within ${timeoutMs} ms`);
  }
}

/** The limits for the rate-limited key. */
const RPM = 600;
const TPM = 100_000;
/** Every answer of the rate-limited key has this many completion tokens: the token limit binds (≈200 requests). */
const ANSWER_TOKENS = 490;

interface Answer {
  status: number;
  headers: Headers;
  /** Buffered: the JSON body; streamed 200: null. */
  json: any;
  /** A 200 that is whole: JSON with choices, or a stream ending in [DONE]. */
  complete: boolean;
  /** input + output tokens the answer reports (buffered usage, or the stream's usage chunk). */
  tokens: number;
}

async function chat(url: string, key: string, model: string, stream: boolean, maxTokens: number): Promise<Answer> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model, stream, max_tokens: maxTokens, messages: [{ role: 'user', content: 'Count to a few hundred.' }],
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    }),
  });
  const text = await response.text();
  if (response.status !== 200 || !stream) {
    const json = JSON.parse(text);
    const complete = response.status === 200 && Array.isArray(json.choices) && json.choices[0]?.finish_reason === 'stop';
    return { status: response.status, headers: response.headers, json, complete, tokens: json.usage?.total_tokens ?? 0 };
  }
  const frames = sseData(text);
  const usage = frames.slice(0, -1).map((f) => JSON.parse(f)).find((chunk) => chunk.usage)?.usage;
  return { status: 200, headers: response.headers, json: null, complete: frames.at(-1) === '[DONE]', tokens: usage?.total_tokens ?? 0 };
}

/**
 * Issue 10's acceptance with real OS processes: two `switchyard serve` processes sharing one PostgreSQL
 * database and one Redis, an upstream mock in this process, 20 concurrent clients spread over both.
 * 1. A key limited to 600 RPM and 100,000 TPM, for a whole minute: what is admitted stays within 2% of
 *    the binding limit and reaches 95% of it, nothing admitted is cut, every refusal is a 429 naming it.
 * 2. A tenant budget of $1.00 with one process killed (SIGKILL) mid-run and restarted: spend stops within
 *    one request of $1.00, then 402 with the reset time, the soft threshold once, and tenant_spend = the
 *    cost ledger = the billable AttemptFinished events, exactly, for every day and month row.
 */
describeWithServices('limits across two switchyard processes (Redis + PostgreSQL)', () => {
  // Unique ids: Redis is shared with other runs, and windows and budget counters outlive a run.
  const run = randomBytes(4).toString('hex');
  const rateKeyId = `lp-rl-${run}`;
  const tenant = `lp-budget-${run}`;
  const rateModel = `m-rl-${run}`;
  const budgetModel = `m-budget-${run}`;
  const rateKey = generateApiKey();
  const budgetKey = generateApiKey();
  const hookSecret = randomBytes(16).toString('hex');
  const adminToken = `lp-admin-${run}-0123456789abcdef`;
  const mock = new MockProviderServer();
  const deliveries: Array<{ body: string; signature: string }> = [];
  let hook: Server;
  let scratch: { url: string; drop: () => Promise<void> };
  let db: pg.Client;
  let dir: string;
  let nodeA: ServerProcess;
  let nodeB: ServerProcess;

  const yaml = (mockUrl: string, hookUrl: string) => `
providers:
  - id: mock-upstream
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true
    apiKey: env:LP_UPSTREAM_KEY
deployments:
  - id: rl-${run}
    provider: mock-upstream
    model: ${rateModel}
    price: { inputPer1M: "1", outputPer1M: "2" }
  - id: budget-${run}
    provider: mock-upstream
    model: ${budgetModel}
    price: { inputPer1M: "10", outputPer1M: "80" }
aliases:
  - name: rate-chat
    routes: [{ deployment: rl-${run} }]
  - name: budget-chat
    routes: [{ deployment: budget-${run} }]
tenants:
  - id: t-${rateKeyId}
  - id: ${tenant}
    budget:
      monthlyUsd: "1.00"
      softPct: 50
      webhook: { url: "${hookUrl}", secret: env:LP_HOOK_SECRET_KEY, allowPrivateNetwork: true }
apiKeys:
  - id: ${rateKeyId}
    tenant: t-${rateKeyId}
    key: env:LP_RATE_KEY
    limits: { rpm: ${RPM}, tpm: ${TPM} }
  - id: ${tenant}-app
    tenant: ${tenant}
    key: env:LP_BUDGET_KEY
`;

  /** One node's environment: the same file, database and Redis; its own node id and data directory (spool). */
  const environment = (nodeId: string): NodeJS.ProcessEnv => ({
    ...process.env,
    DATABASE_URL: scratch.url,
    REDIS_URL: redisUrl!,
    CLICKHOUSE_URL: '',
    SWITCHYARD_CONFIG: join(dir, 'switchyard.yaml'),
    SWITCHYARD_DATA_DIR: join(dir, nodeId),
    SWITCHYARD_NODE_ID: nodeId,
    SWITCHYARD_POLL_MS: '200',
    SWITCHYARD_REQUEST_LOG: 'off',
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'warn',
    LP_UPSTREAM_KEY: 'upstream-secret-value-123456',
    LP_RATE_KEY: rateKey,
    LP_BUDGET_KEY: budgetKey,
    LP_HOOK_SECRET_KEY: hookSecret,
  });

  beforeAll(async () => {
    const mockUrl = await mock.listen(0);
    hook = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        deliveries.push({ body, signature: String(req.headers['x-switchyard-signature'] ?? '') });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/budget`;
    scratch = await createScratchDatabase(databaseUrl!);
    db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
    dir = mkdtempSync(join(tmpdir(), 'switchyard-limits-'));
    writeFileSync(join(dir, 'switchyard.yaml'), yaml(mockUrl, hookUrl));
    // One after the other: the first applies the file, the second finds it applied (nothing appended).
    nodeA = await startServer(environment('lp-a'));
    nodeB = await startServer(environment('lp-b'));
  }, 90_000);
  afterAll(async () => {
    await Promise.all([nodeA?.stop(), nodeB?.stop()]);
    await db?.end();
    await scratch?.drop();
    await mock.close();
    await new Promise((resolve) => hook?.close(resolve));
  });

  test('rate limits: 20 clients over both processes for a minute get the token limit (±2%, ≥95%), never the request limit; every refusal a 429 naming the key', async () => {
    mock.addScenario({ model: rateModel, behaviour: { chunks: ANSWER_TOKENS } });
    const answers: Answer[] = [];
    // The minute starts on a whole second, where the limiter's one-second slots start: every admission of
    // the run then falls in the same 60 whole seconds, which may hold at most the limit (the burst rule of docs/keys-limits-budgets.md
    // is the whole limit at once, never more). New requests stop a second before the minute ends: one sent
    // later could be admitted after it, once the first second's usage has left the window and the next
    // minute's capacity begins — the sliding window at work, not an overshoot.
    const start = Math.ceil(Date.now() / 1000) * 1000;
    await sleep(start - Date.now());
    const lastSend = start + 60_000 - 1_000;
    await Promise.all(Array.from({ length: 20 }, async (_, client) => {
      const node = client % 2 ? nodeB : nodeA;
      while (Date.now() < lastSend) {
        const answer = await chat(node.url, rateKey, 'rate-chat', client % 4 === 0, ANSWER_TOKENS + 10);
        answers.push(answer);
        // A refused client keeps asking all minute long, once a second (retry-after, capped as SDKs cap it,
        // and not at full speed: the machine is shared with the other suites of the run).
        if (answer.status !== 200) await sleep(Math.min(1_000, lastSend - Date.now()));
      }
    }));

    const admitted = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(admitted.every((a) => a.complete)).toBe(true); // nothing admitted is cut off
    expect(refused.length).toBeGreaterThan(100); // the clients kept asking against a full window
    for (const a of refused) {
      expect(a.status).toBe(429);
      expect(a.json.error).toMatchObject({ code: 'rate_limited', scope: `key:${rateKeyId}`, limit_type: 'tokens' });
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
    }

    // Tokens bind: within 2% of the limit and at least 95% of it, as the answers report them and as the
    // events record them (input + output of every attempt of the key, on either node).
    const answered = admitted.reduce((sum, a) => sum + a.tokens, 0);
    const recorded = (await db.query(
      `SELECT count(*)::int AS requests, coalesce(sum((data->'usage'->>'input')::int + (data->'usage'->>'output')::int), 0)::int AS tokens,
         count(DISTINCT metadata->>'nodeId')::int AS nodes
       FROM events WHERE event_type = 'AttemptFinished' AND data->>'keyId' = $1`, [rateKeyId])).rows[0];
    expect(recorded.requests).toBe(admitted.length);
    expect(recorded.tokens).toBe(answered);
    expect(recorded.nodes).toBe(2);
    expect(answered).toBeLessThanOrEqual(TPM * 1.02);
    expect(answered).toBeGreaterThanOrEqual(TPM * 0.95);
    // The request limit is not the binding one, and is not passed either.
    expect(admitted.length).toBeLessThanOrEqual(RPM * 1.02);
    expect(admitted.every((a) => a.tokens > ANSWER_TOKENS)).toBe(true);

    // Every answer carries OpenAI's headers, from the key's counters.
    const sample = admitted[admitted.length - 1].headers;
    expect(sample.get('x-ratelimit-limit-requests')).toBe(String(RPM));
    expect(sample.get('x-ratelimit-limit-tokens')).toBe(String(TPM));
    expect(Number(sample.get('x-ratelimit-remaining-requests'))).toBeLessThan(RPM);
    expect(sample.get('x-ratelimit-reset-tokens')).toMatch(/^(\d+ms|\d+(\.\d)?s|\dm\d+(\.\d)?s)$/);
    expect(refused[0].headers.get('x-ratelimit-remaining-tokens')).not.toBeNull();
  }, 75_000);

  test('budget: $1.00 over both processes, one killed -9 mid-run and restarted: within one request of $1.00, then 402; soft threshold once; spend = ledger = events, exactly', async () => {
    // Slow enough answers that the killed node has requests in flight.
    mock.addScenario({ model: budgetModel, behaviour: { latencyMs: 150 } });
    const served = new Set<string>(); // request ids of the answers received whole
    let refusals = 0;
    let lost = 0;
    let down: Promise<void> | null = null; // while node A is down: until it serves again
    let pausedB: Promise<void> | null = null;
    let restarted = false;
    let servedAfterRestart = 0;

    const clients = Promise.all(Array.from({ length: 20 }, async (_, client) => {
      const onA = client % 2 === 0;
      for (let i = 0; i < 400; i++) {
        // A client of the killed node waits for it to come back; the other node's clients keep going
        // (up to a point: some budget is left for the restarted node to show that it serves and bills).
        if (onA && down) await down;
        if (!onA && pausedB) await pausedB;
        const afterRestart = onA && restarted;
        let answer: Answer;
        try {
          answer = await chat((onA ? nodeA : nodeB).url, budgetKey, 'budget-chat', client % 4 === 0, 20);
        } catch {
          lost++; // in flight on the killed node: no answer (its events may or may not have been committed)
          continue;
        }
        if (answer.status === 402) {
          refusals++;
          return;
        }
        expect(answer.status).toBe(200);
        expect(answer.complete).toBe(true);
        served.add(answer.headers.get('x-request-id')!);
        if (afterRestart) servedAfterRestart++;
      }
      throw new Error(`client ${client} was never refused`);
    }));
    clients.catch(() => undefined); // awaited below; a client's failure must not go unhandled meanwhile

    // A fifth of the budget spent, then node A dies without any chance to drain.
    await waitUntil(async () => (await spentOnEvents()).gte('0.20'), 30_000, 'a fifth of the budget is spent');
    let back!: () => void;
    down = new Promise((resolve) => (back = resolve));
    const died = new Promise((resolve) => nodeA.child.once('exit', (_code, signal) => resolve(signal)));
    nodeA.child.kill('SIGKILL');
    expect(await died).toBe('SIGKILL');
    // The same node again: same environment, same data directory. Node B serves alone meanwhile, up to $0.60.
    let up = false;
    const restarting = startServer(environment('lp-a')).finally(() => (up = true));
    await waitUntil(async () => up || (await spentOnEvents()).gte('0.60'), 60_000, 'node A is back or B spent $0.60');
    if (!up) pausedB = down;
    nodeA = await restarting;
    restarted = true;
    down = null;
    pausedB = null;
    back();
    await clients;
    expect(refusals).toBe(20);
    expect(lost).toBeGreaterThan(0); // the kill did cut requests in flight
    expect(servedAfterRestart).toBeGreaterThan(0);
    // The file was applied once, by the first process: the second and the restarted one found it applied.
    expect((await db.query(`SELECT count(*)::int AS n FROM events WHERE event_type = 'ApiKeyIssued'`)).rows[0].n).toBe(2);

    for (const node of [nodeA, nodeB]) {
      const refused = await chat(node.url, budgetKey, 'budget-chat', false, 20);
      expect(refused.status).toBe(402);
      const nextMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString();
      expect(refused.json.error).toMatchObject({
        code: 'budget_exceeded', type: 'insufficient_quota', scope: `tenant:${tenant}`, period: 'month', resets_at: nextMonth,
      });
      expect(refused.json.error.message).toContain(`It resets at ${nextMonth}`);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }

    // What was billed, from the events: at most $1.00 plus the largest single attempt.
    const attempts = await attemptsOf(tenant);
    const billable = attempts.filter(isBillable);
    const spent = Decimal.sum(0, ...billable.map((a) => a.cost.total));
    const largest = Decimal.max(0, ...billable.map((a) => a.cost.total));
    expect(spent.lte(new Decimal('1.00').plus(largest))).toBe(true);
    // Every attempt is recorded once, whatever the crash: no (request, attempt) twice in the events.
    expect(new Set(attempts.map((a) => `${a.requestId}#${a.attempt}`)).size).toBe(attempts.length);
    // Every answer a client received whole is billed (its events were committed before its last byte).
    const billed = new Set(billable.map((a) => a.requestId));
    expect([...served].filter((id) => !billed.has(id))).toEqual([]);
    expect(billable.length).toBeGreaterThanOrEqual(served.size);
    expect(billable.length).toBeLessThanOrEqual(served.size + lost);

    // The projections catch up on whichever node holds their lease now.
    const ledger = async () => (await db.query(
      `SELECT count(*)::int AS n, count(DISTINCT (request_id, attempt))::int AS distinct, coalesce(sum(cost_usd), 0)::text AS total
       FROM cost_ledger WHERE tenant_id = $1`, [tenant])).rows[0] as { n: number; distinct: number; total: string };
    await waitUntil(async () => (await ledger()).n === billable.length, 20_000, 'the ledger has every billable attempt');
    const rows = await ledger();
    expect(rows.distinct).toBe(rows.n);
    expect(new Decimal(rows.total).eq(spent)).toBe(true);

    // What the killed node left in flight (at most one request per client of it) is still held in the
    // budget's counter, for as long as it might have lived: committed = settled + the holds.
    const now = new Date();
    const counter = `{switchyard}:budget:tenant:${tenant}:month:${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    const redis = new Redis(redisUrl!);
    try {
      const [committed, settledNano, holds] = await Promise.all([
        redis.get(`${counter}:committed`), redis.get(`${counter}:settled`), redis.zrange(`${counter}:holds`, 0, -1, 'WITHSCORES'),
      ]);
      const held = holds.filter((_, i) => i % 2 === 0);
      expect(held.length).toBeLessThanOrEqual(10);
      expect(Number(committed) - Number(settledNano)).toBe(held.reduce((sum, member) => sum + Number(member.split(':')[0]), 0));
      for (let i = 1; i < holds.length; i += 2) expect(Number(holds[i])).toBeGreaterThan(Date.now());
    } finally {
      redis.disconnect();
    }

    // Per period (day and month rows): tenant_spend = the ledger rows of that period = the billable events recorded in it.
    const periods = (await db.query(
      `SELECT s.period, s.period_start, s.spent_usd::text AS spent,
         (SELECT coalesce(sum(l.cost_usd), 0) FROM cost_ledger l
           WHERE l.tenant_id = s.tenant_id AND date_trunc(s.period, l.recorded_at, 'UTC') = s.period_start)::text AS ledger
       FROM tenant_spend s WHERE s.tenant_id = $1 ORDER BY 1, 2`, [tenant])).rows as Array<{ period: string; period_start: Date; spent: string; ledger: string }>;
    const eventPeriods = await billableByPeriod(tenant);
    expect(periods.map((p) => `${p.period}@${p.period_start.toISOString()}`).sort()).toEqual([...eventPeriods.keys()].sort());
    expect(periods.map((p) => p.period).sort()).toEqual(expect.arrayContaining(['day', 'month']));
    for (const p of periods) {
      const events = eventPeriods.get(`${p.period}@${p.period_start.toISOString()}`)!;
      expect({ period: p.period, spent: new Decimal(p.spent).toFixed(), ledger: new Decimal(p.ledger).toFixed() })
        .toEqual({ period: p.period, spent: events.toFixed(), ledger: events.toFixed() });
    }

    // The soft threshold (50%) is recorded exactly once although both nodes (and a restarted one) settled past it.
    await waitUntil(async () => (await thresholds()).some((t) => t.pct === 50), 5_000, 'the threshold is recorded');
    await sleep(300);
    const crossed = await thresholds();
    expect(crossed.filter((t) => t.pct === 50)).toHaveLength(1);
    expect(crossed.filter((t) => t.pct === 100).length).toBeLessThanOrEqual(1);
    await waitUntil(() => deliveries.some((d) => JSON.parse(d.body).pct === 50), 5_000, 'the webhook is called');
    const fifty = deliveries.filter((d) => JSON.parse(d.body).pct === 50);
    expect(fifty).toHaveLength(1);
    const [, timestamp, signature] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(fifty[0].signature)!;
    expect(createHmac('sha256', hookSecret).update(`${timestamp}.${fifty[0].body}`).digest('hex')).toBe(signature);
  }, 90_000);

  /** Every AttemptFinished of the tenant, on any node. */
  async function attemptsOf(tenantId: string): Promise<Array<AttemptFinished['data']>> {
    const rows = await db.query(`SELECT data FROM events WHERE event_type = 'AttemptFinished' AND data->>'tenantId' = $1`, [tenantId]);
    return rows.rows.map((r) => r.data);
  }

  /** What the tenant's attempts cost so far (an attempt that is not billable costs nothing). */
  async function spentOnEvents(): Promise<Decimal> {
    const rows = await db.query(
      `SELECT coalesce(sum((data->'cost'->>'total')::numeric), 0)::text AS total FROM events WHERE event_type = 'AttemptFinished' AND data->>'tenantId' = $1`, [tenant]);
    return new Decimal(rows.rows[0].total);
  }

  /** The billable attempts' cost per UTC day and month they were recorded in, keyed `period@start`. */
  async function billableByPeriod(tenantId: string): Promise<Map<string, Decimal>> {
    const rows = await db.query(`SELECT data, recorded_at FROM events WHERE event_type = 'AttemptFinished' AND data->>'tenantId' = $1`, [tenantId]);
    const sums = new Map<string, Decimal>();
    for (const { data, recorded_at: at } of rows.rows as Array<{ data: AttemptFinished['data']; recorded_at: Date }>) {
      if (!isBillable(data)) continue;
      const starts = { day: Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()), month: Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1) };
      for (const [period, start] of Object.entries(starts)) {
        const key = `${period}@${new Date(start).toISOString()}`;
        sums.set(key, (sums.get(key) ?? new Decimal(0)).plus(data.cost.total));
      }
    }
    return sums;
  }

  async function thresholds(): Promise<Array<{ pct: number; period: string }>> {
    const rows = await db.query(`SELECT data FROM events WHERE event_type = 'BudgetThresholdCrossed' AND stream_id = $1`, [`tenant-${tenant}`]);
    return rows.rows.map((r) => r.data);
  }
});
