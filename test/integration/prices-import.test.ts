import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { AdminClient } from '../support/admin-client.js';
import { runCli } from '../support/cli-process.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { defaultYaml, startPostgresGateway, type TestGateway } from '../support/gateway-harness.js';
import { requireService } from '../support/services.js';

/**
 * Issue 34 item 8: `switchyard prices import FILE` and `POST /admin/v1/prices/import` read a LiteLLM
 * model price map and schedule price versions for the deployments it matches, exactly, with the actor
 * recorded; a malformed map, or a version the Price aggregate refuses, appends nothing.
 */
const databaseUrl = requireService('DATABASE_URL');
const describeWithPostgres = databaseUrl ? describe : describe.skip;
const ADMIN_TOKEN = 'prices-import-admin-token-0123456789';
const FIXTURE = new URL('../../../test/fixtures/prices/litellm-model-prices.json', import.meta.url);

function importYaml(mockUrl: string, keyEnv: string): string {
  return defaultYaml(mockUrl, keyEnv)
    .replace('deployments:', `  - id: openai-main
    type: openai
    baseUrl: https://api.openai.com/v1
    apiKey: env:SY_TEST_UPSTREAM_KEY
  - id: azure-main
    type: azure-openai
    baseUrl: https://my-resource.openai.azure.com
    apiVersion: "2024-10-21"
    apiKey: env:SY_TEST_UPSTREAM_KEY
  - id: anthropic-main
    type: anthropic
    baseUrl: https://api.anthropic.com
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:
  - id: nano
    provider: openai-main
    model: gpt-4.1-nano
    capabilities: [chat]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.20", outputPer1M: "0.80" }
  - id: mini
    provider: openai-main
    model: gpt-4o-mini
    capabilities: [chat]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "0.15", outputPer1M: "0.60", cachedInputPer1M: "0.075" }
  - id: azure-4o
    provider: azure-main
    model: gpt-4o
    capabilities: [chat]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "2.50", outputPer1M: "10.00" }
  - id: flash-compat
    provider: mock-upstream
    model: gemini-1.5-flash
    capabilities: [chat]
    contextWindow: 64000
    maxOutputTokens: 4096
    price: { inputPer1M: "1", outputPer1M: "1" }`);
}

describeWithPostgres('prices import from a LiteLLM price map', () => {
  let gw: TestGateway & { sql: import('pg').Client };
  let admin: AdminClient;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const fixture = readFileSync(FIXTURE, 'utf8');
  // In this process (cli-in-process.ts): the refusals, plans and reports are the subject here; the first
  // real import runs as a `switchyard` process of its own.
  const cli = (args: string[]) => runCliInProcess(['prices', 'import', ...args], env);
  const priceEvents = async () => (await gw.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE event_type = 'PriceScheduled'`)).rows[0].n;
  const current = async (deployment: string) => (await admin.get(`/deployments/${deployment}/prices`)).json;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  beforeAll(async () => {
    gw = await startPostgresGateway(databaseUrl!, { yaml: importYaml, environment: { adminToken: ADMIN_TOKEN } });
    admin = new AdminClient(gw.url, ADMIN_TOKEN);
    dir = mkdtempSync(join(tmpdir(), 'switchyard-prices-import-'));
    env = { ...process.env, DATABASE_URL: gw.gateway.platform.environment.databaseUrl!, SWITCHYARD_DATA_DIR: ':memory:', CLICKHOUSE_URL: '', LOG_LEVEL: 'error' };
    // A deployment registered without a price: it cannot serve until one is scheduled.
    const registered = await admin.post('/deployments', { id: 'haiku-new', provider: 'anthropic-main', model: 'claude-3-5-haiku-20241022', capabilities: ['chat'], contextWindow: 200000, maxOutputTokens: 8192 });
    expect(registered.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('malformed maps are refused naming the entry and the field, through the CLI and the admin API; nothing is appended', async () => {
    const before = await priceEvents();
    const map = JSON.parse(fixture);
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ 'gpt-4o-mini': { ...map['gpt-4o-mini'], output_cost_per_token: 'NaN' } }, 'gpt-4o-mini', 'output_cost_per_token'],
      [{ 'gpt-4.1-nano': { ...map['gpt-4.1-nano'], input_cost_per_token: -1e-7 } }, 'gpt-4.1-nano', 'input_cost_per_token'],
      [{ 'mistral/mistral-large-latest': { ...map['mistral/mistral-large-latest'], cache_read_input_token_cost: 'cheap' } }, 'mistral/mistral-large-latest', 'cache_read_input_token_cost'],
    ];
    for (const [bad, entry, field] of cases) {
      // The bad entry among the good ones: the good ones are not imported either.
      const whole = { ...map, ...bad };
      const fromCli = await cli([file('bad.json', JSON.stringify(whole))]);
      expect([entry, fromCli.code, fromCli.stdout]).toEqual([entry, 1, '']);
      expect(fromCli.stderr).toMatch(new RegExp(`^Entry "${entry.replace(/[./]/g, '\\$&')}" field ${field}: .+ is (negative|not a number)\\. Nothing was imported\\.\\n$`));
      const fromApi = await admin.post('/prices/import', { map: whole });
      expect([entry, fromApi.status, fromApi.json.error.code]).toEqual([entry, 422, 'invalid_price_map']);
      expect(fromApi.json.error.fields).toEqual([{ path: `map[${JSON.stringify(entry)}].${field}`, message: expect.stringContaining(`Entry "${entry}" field ${field}`) }]);
    }
    const notJson = await cli([file('broken.json', fixture.slice(0, 200))]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('is not a readable JSON price map');
    expect((await admin.post('/prices/import', { map: [1, 2] })).status).toBe(400);
    expect((await admin.post('/prices/import', { map: {}, effectiveFrom: 'tomorrow' })).json.error.code).toBe('validation_failed');
    const usage = await runCliInProcess(['prices', 'import'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('prices import needs one FILE');
    expect(await priceEvents()).toBe(before);
  }, 60_000);

  test('a version the Price aggregate refuses (another price at the same start) refuses the whole import', async () => {
    const at = new Date(Date.now() + 3 * 86_400_000).toISOString();
    expect((await admin.post('/deployments/mini/prices', { effectiveFrom: at, inputPer1M: '0.2', outputPer1M: '0.8' })).status).toBe(201);
    const before = await priceEvents();
    const refused = await cli([file('map.json', fixture), '--effective-from', at]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Deployment mini: A different price already starts at ${at}; prices are never edited. Nothing was imported.`);
    expect(await priceEvents()).toBe(before);
  }, 60_000);

  test('--dry-run prints every deployment: current → new, unchanged, no entry, ambiguous; unmatched entries counted; nothing appended', async () => {
    const before = await priceEvents();
    const dry = await cli([file('map.json', fixture), '--dry-run']);
    expect(dry.code).toBe(0);
    const lines = dry.stdout.trimEnd().split('\n');
    expect(lines.slice(0, -2)).toEqual([
      'azure-4o (gpt-4o on azure-main, azure-openai): input 2.50, output 10.00 → input 2.75, output 11 (entry "azure/gpt-4o")',
      'backup (model-backup on mock-upstream, openai-compatible): no entry in the map; keeps input 0.15, output 0.60',
      'flash-compat (gemini-1.5-flash on mock-upstream, openai-compatible): ambiguous: "gemini/gemini-1.5-flash", "gemini-1.5-flash" price it differently; keeps input 1, output 1',
      'haiku-new (claude-3-5-haiku-20241022 on anthropic-main, anthropic): no price → input 0.8, output 4, cached input 0.08, cache write 1 (entry "claude-3-5-haiku-20241022")',
      'mini (gpt-4o-mini on openai-main, openai): unchanged (entry "gpt-4o-mini")',
      // 1e-07, 4e-07 and 2.5e-08 per token: binary floating point would make these 0.09999999999999999, 0.39999999999999997, 0.024999999999999998.
      'nano (gpt-4.1-nano on openai-main, openai): input 0.20, output 0.80 → input 0.1, output 0.4, cached input 0.025 (entry "gpt-4.1-nano")',
      'primary (model-primary on mock-upstream, openai-compatible): no entry in the map; keeps input 2.50, output 10.00, cached input 1.25',
    ]);
    expect(lines.at(-2)).toMatch(/^dry run: nothing appended; would schedule 3 price versions effective from \S+; 1 unchanged, 2 with no entry in the map, 1 ambiguous \(kept\)\.$/);
    expect(lines.at(-1)).toBe('The map: 5 priced entries match no deployment (--verbose lists them); 1 entry has no price per input and output token.');
    const verbose = await cli([file('map.json', fixture), '--dry-run', '--verbose']);
    expect(verbose.stdout.trimEnd().split('\n').filter((line) => line.startsWith('  unmatched: ')))
      .toEqual(['gpt-4o', 'o1-mini', 'anthropic.claude-3-5-haiku-20241022-v1:0', 'text-embedding-3-small', 'mistral/mistral-large-latest'].map((key) => `  unmatched: ${key}`));
    expect(await priceEvents()).toBe(before);
  }, 60_000);

  test('the import schedules exact per-million prices with the CLI user as actor, leaves the rest alone; a second run changes nothing', async () => {
    // No price, no serving: an alias to the unpriced deployment is refused before the import.
    expect((await admin.put('/aliases/haiku', { routes: [{ deployment: 'haiku-new', priority: 0 }] })).status).toBe(422);
    const untouched = Object.fromEntries(await Promise.all(['primary', 'backup', 'mini', 'flash-compat'].map(async (id) => [id, await current(id)])));
    const imported = await runCli(['prices', 'import', file('map.json', fixture), '--json'], env);
    expect(imported.code).toBe(0);
    const report = JSON.parse(imported.stdout);
    expect(report.counts).toEqual({ schedule: 3, unchanged: 1, noEntry: 2, ambiguous: 1, unmatchedEntries: 5, unpricedEntries: 1 });
    expect((await current('nano')).current).toMatchObject({ inputPer1M: '0.1', outputPer1M: '0.4', cachedInputPer1M: '0.025', cacheWritePer1M: null, reasoningPer1M: null });
    expect((await current('azure-4o')).current).toMatchObject({ inputPer1M: '2.75', outputPer1M: '11', cachedInputPer1M: null });
    expect((await current('haiku-new')).current).toMatchObject({ priceVersion: 1, inputPer1M: '0.8', outputPer1M: '4', cachedInputPer1M: '0.08', cacheWritePer1M: '1' });
    expect(report.deployments.find((d: { deployment: string }) => d.deployment === 'nano').priceVersion).toBe(2);
    for (const [id, view] of Object.entries(untouched)) expect(await current(id)).toEqual(view);
    const actors = await gw.sql.query<{ stream_id: string; actor: string }>(
      `SELECT stream_id, metadata->>'actor' AS actor FROM events WHERE event_type = 'PriceScheduled' AND stream_id IN ('price-nano', 'price-azure-4o', 'price-haiku-new') ORDER BY global_position DESC LIMIT 3`);
    expect(actors.rows.map((row) => row.actor)).toEqual(Array(3).fill(`cli:${userInfo().username}`));
    // Now it has a price, the alias may route to it.
    expect((await admin.put('/aliases/haiku', { routes: [{ deployment: 'haiku-new', priority: 0 }] })).status).toBe(201);

    const before = await priceEvents();
    const again = await cli([file('map.json', fixture)]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('scheduled 0 price versions');
    expect(await priceEvents()).toBe(before);
  }, 60_000);

  test('the admin API: a dry run, then an effective-dated import recorded with the admin as actor', async () => {
    const map = JSON.parse(fixture);
    map['gpt-4.1-nano'] = { ...map['gpt-4.1-nano'], input_cost_per_token: '1.5e-07', output_cost_per_token: 6e-7 };
    const before = await priceEvents();
    const dry = await admin.post('/prices/import', { map, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.json).toMatchObject({ dryRun: true, counts: { schedule: 1, unchanged: 3 } });
    expect(dry.json.deployments.find((d: { deployment: string }) => d.deployment === 'nano'))
      .toMatchObject({ outcome: 'schedule', current: { inputPer1M: '0.1' }, proposed: { inputPer1M: '0.15', outputPer1M: '0.6', cachedInputPer1M: '0.025' } });
    expect(dry.json.unmatchedEntries).toBeUndefined();
    expect(await priceEvents()).toBe(before);

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const real = await admin.post('/prices/import', { map, effectiveFrom: tomorrow, verbose: true });
    expect(real.status).toBe(200);
    expect(real.json).toMatchObject({ dryRun: false, effectiveFrom: tomorrow, counts: { schedule: 1 } });
    expect(real.json.unmatchedEntries).toHaveLength(5);
    const history = await current('nano');
    expect(history.current).toMatchObject({ inputPer1M: '0.1' }); // tomorrow's price is scheduled, not yet in effect
    expect(history.history.at(-1)).toMatchObject({ status: 'scheduled', effectiveFrom: tomorrow, inputPer1M: '0.15', outputPer1M: '0.6' });
    const [event] = (await gw.sql.query<{ actor: string }>(`SELECT metadata->>'actor' AS actor FROM events WHERE stream_id = 'price-nano' ORDER BY stream_version DESC LIMIT 1`)).rows;
    expect(event.actor).toBe('admin:env');
    expect(await priceEvents()).toBe(before + 1);
  }, 60_000);
});
