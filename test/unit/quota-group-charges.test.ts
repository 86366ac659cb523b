import { duration } from '../../modules/limits/rate-limit/rate-limit-headers.js';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { type AttemptReport, type AttemptTurn, runAttemptLoop } from '../../modules/inference/pipeline/attempt-loop.js';
import { unavailableError } from '../../modules/inference/pipeline/client-errors.js';
import { QuotaGroupCharges } from '../../modules/inference/pipeline/quota-group-charges.js';
import { DeploymentGate } from '../../modules/inference/resilience/deployment-gate.js';
import { DeploymentHealth } from '../../modules/inference/resilience/deployment-health.js';
import { DEFAULT_RESILIENCE } from '../../modules/inference/resilience/resilience-settings.js';
import { DeploymentConcurrency } from '../../modules/limits/deployment-concurrency.js';
import { LimitsRedis } from '../../modules/limits/limits-redis.js';
import { RateLimiter } from '../../modules/limits/rate-limit/rate-limiter.js';
import { testAlias, testCandidates, testDeployment } from '../support/routing-fixtures.js';

const retry = { ...DEFAULT_RESILIENCE.retry, baseBackoffMs: 1, maxBackoffMs: 1 };
const ESTIMATE = { requests: 1, inputTokens: 10, outputTokens: 100 };
const USAGE = { input: 12, cachedInput: 0, cacheWrite: 0, output: 30, reasoning: 0 };

/** Two deployments in two quota groups of 1 request and 1,000 tokens a minute each; one in-process limiter. */
function setup() {
  const now = { t: 1_000_000 };
  const limiter = new RateLimiter(new LimitsRedis(null, 'test'), () => now.t);
  const limits = { rpm: 1, tpm: 1_000, maxConcurrency: null };
  const primary = testDeployment('primary', { quotaGroup: 'group-a', limits });
  const backup = testDeployment('backup', { quotaGroup: 'group-b', limits });
  const gate = new DeploymentGate(new DeploymentHealth(DEFAULT_RESILIENCE.breaker), new DeploymentConcurrency());
  const alias = testAlias([primary, backup]);
  return { limiter, gate, alias, candidates: testCandidates(alias), primary, backup, now };
}

function answering(script: Array<ProviderError | 'answer'>) {
  const turns: AttemptTurn[] = [];
  const attempt = async (turn: AttemptTurn): Promise<AttemptReport<string>> => {
    turns.push(turn);
    const next = script.shift();
    if (next instanceof ProviderError) return { answer: null, outcome: 'failed', error: next };
    return { answer: `answered by ${turn.candidate.deployment.id}`, outcome: 'success', error: null };
  };
  return { attempt, turns };
}

function run(s: ReturnType<typeof setup>, quota: QuotaGroupCharges, attempt: (turn: AttemptTurn) => Promise<AttemptReport<string>>) {
  return runAttemptLoop<string>({
    candidates: s.candidates, gate: s.gate, retry, maxAttempts: 3, signal: new AbortController().signal,
    remainingMs: () => 60_000, random: () => 0, attempt, charge: (c) => quota.enter(c.deployment, c.route),
  });
}

/** Whether a quota group has room for one more request of the estimate (charging nothing either way). */
async function hasRoom(s: ReturnType<typeof setup>, deployment: typeof s.primary): Promise<boolean> {
  try {
    const probe = await s.limiter.reserve([{ kind: 'quota_group', id: deployment.quotaGroup!, limits: deployment.limits }], ESTIMATE);
    probe.cancel();
    return true;
  } catch {
    return false;
  }
}

describe('deployment quota groups are charged by the attempts that go there', () => {
  test('an exhausted first group is skipped with its reason; the second route serves and only its group is charged', async () => {
    const s = setup();
    const other = new QuotaGroupCharges(s.limiter, ESTIMATE);
    expect(await other.enter(s.primary, 'chat#1')).toBeNull(); // another request took group-a's one request
    const quota = new QuotaGroupCharges(s.limiter, ESTIMATE);
    const { attempt, turns } = answering(['answer']);
    const result = await run(s, quota, attempt);
    expect(result).toEqual({ kind: 'answered', answer: 'answered by backup' });
    expect(turns.map((t) => t.candidate.deployment.id)).toEqual(['backup']); // primary was never called
    expect(turns[0].why).toBe('attempt 1: first choice backup, passing over chat#1 (quota_group_exhausted)');
    expect(await hasRoom(s, s.backup)).toBe(false);
    quota.settle(new Map([['backup', USAGE]]));
    expect(await hasRoom(s, s.backup)).toBe(false); // one request a minute, still used
  });

  test('a planned first route that fails before output still uses its group; the fallback group is charged too', async () => {
    const s = setup();
    const quota = new QuotaGroupCharges(s.limiter, ESTIMATE);
    const { attempt, turns } = answering([new ProviderError('transient', 'boom', 500), 'answer']);
    expect(await run(s, quota, attempt)).toEqual({ kind: 'answered', answer: 'answered by backup' });
    expect(turns.map((t) => t.candidate.deployment.id)).toEqual(['primary', 'backup']);
    expect(await hasRoom(s, s.primary)).toBe(false);
    expect(await hasRoom(s, s.backup)).toBe(false);
  });

  test('settlement gives back the unused tokens of each group, zero tokens for an attempt that produced nothing', async () => {
    const s = setup();
    const tokens = { rpm: null, tpm: 160, maxConcurrency: null };
    const a = testDeployment('a', { quotaGroup: 'ga', limits: tokens });
    const b = testDeployment('b', { quotaGroup: 'gb', limits: tokens });
    const quota = new QuotaGroupCharges(s.limiter, ESTIMATE);
    expect(await quota.enter(a, 'chat#1')).toBeNull();
    expect(await quota.enter(b, 'chat#2')).toBeNull();
    expect(await quota.enter(b, 'chat#2')).toBeNull(); // a retry on the same group is not charged twice
    // Each group holds the 110-token estimate: another 110 does not fit in 160.
    const probe = (d: typeof a) => s.limiter.reserve([{ kind: 'quota_group', id: d.quotaGroup!, limits: d.limits }], ESTIMATE);
    await expect(probe(a)).rejects.toMatchObject({ status: 429, detail: { scope: 'quota_group:ga', limit_type: 'tokens' } });
    await expect(probe(b)).rejects.toMatchObject({ status: 429, detail: { scope: 'quota_group:gb' } });
    quota.settle(new Map([['b', USAGE]])); // a produced nothing, b used 42 tokens
    (await probe(a)).cancel(); // 0 + 110 fits
    (await probe(b)).cancel(); // 42 + 110 fits
    await expect(quota.enter(a, 'chat#1')).rejects.toThrow(/settled already/);
  });

  test('both groups exhausted: the loop ends with both routes skipped and the client gets 429 naming a quota group', async () => {
    const s = setup();
    const other = new QuotaGroupCharges(s.limiter, ESTIMATE);
    expect(await other.enter(s.primary, 'chat#1')).toBeNull();
    expect(await other.enter(s.backup, 'chat#2')).toBeNull();
    const quota = new QuotaGroupCharges(s.limiter, ESTIMATE);
    const { attempt, turns } = answering(['answer']);
    const result = await run(s, quota, attempt);
    expect(turns).toHaveLength(0);
    if (result.kind !== 'exhausted') throw new Error('expected no route to be left');
    expect(result.tried.map((t) => [t.route, t.errorClass])).toEqual([['chat#1', 'quota_group_exhausted'], ['chat#2', 'quota_group_exhausted']]);
    const error = unavailableError(s.alias, result.tried);
    expect(error.status).toBe(429);
    expect(error.code).toBe('rate_limited');
    expect(error.detail).toMatchObject({ scope: expect.stringMatching(/^quota_group:group-[ab]$/), limit_type: 'requests' });
    expect(error.message).toContain("deployment quota group 'group-a'");
    expect(error.message).toContain("deployment quota group 'group-b'");
    expect(Number(error.headers['retry-after'])).toBeGreaterThan(0);
    // The group that frees up first answers with its own headers: retry-after and its reset count to one
    // instant (the key's headers set at admission would otherwise stand next to it), and its setting is named.
    const retryMs = Number(error.headers['retry-after-ms']);
    expect(error.headers['x-ratelimit-reset-requests']).toBe(duration(retryMs));
    expect(error.headers['retry-after']).toBe(String(Math.max(1, Math.ceil(retryMs / 1000))));
    expect(error.detail).toMatchObject({ retry_after_s: Number(error.headers['retry-after']), setting: expect.stringMatching(/^limits\.rpm of the deployments in quota group 'group-[ab]'$/) });
  });

  test('a deployment without a named quota group is its own, and its 429 names the route, never the deployment', async () => {
    const s = setup();
    const limits = { rpm: 1, tpm: 1_000, maxConcurrency: null };
    const primary = testDeployment('acct-7-primary', { limits });
    const backup = testDeployment('acct-7-backup', { limits });
    const alias = testAlias([primary, backup]);
    const other = new QuotaGroupCharges(s.limiter, ESTIMATE);
    expect(await other.enter(primary, 'chat#1')).toBeNull();
    expect(await other.enter(backup, 'chat#2')).toBeNull();
    const quota = new QuotaGroupCharges(s.limiter, ESTIMATE);
    const result = await runAttemptLoop<string>({
      candidates: testCandidates(alias), gate: s.gate, retry, maxAttempts: 3, signal: new AbortController().signal,
      remainingMs: () => 60_000, random: () => 0, attempt: answering(['answer']).attempt, charge: (c) => quota.enter(c.deployment, c.route),
    });
    if (result.kind !== 'exhausted') throw new Error('expected no route to be left');
    const error = unavailableError(alias, result.tried);
    expect(error.status).toBe(429);
    expect(error.detail).toMatchObject({ scope: expect.stringMatching(/^quota_group:chat#[12]$/), limit_type: 'requests' });
    expect(error.message).toContain("the provider quota of route 'chat#1'");
    expect(JSON.stringify({ message: error.message, detail: error.detail, headers: error.headers })).not.toMatch(/acct-7|model-/);
  });
});
