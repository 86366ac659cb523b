import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCliInProcess } from '../support/cli-in-process.js';
import { runCli as runCliProcess } from '../support/cli-process.js';
import { defaultYaml, startTestGateway } from '../support/gateway-harness.js';
import { createScratchDatabase } from '../support/services.js';
import { seedMigratedDataDir } from '../support/migrated-template.js';

/**
 * The reconciliation's findings are the subject here: the CLI runs in the test's process (cli-in-process.ts,
 * the same code without a process's seconds of start-up each), except the table finance reads, which is a
 * `switchyard reconcile` process of its own.
 */
const runCli = runCliInProcess;
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/reconciliation/', import.meta.url));
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));

/** The default config plus the provider accounts the exports belong to, and one that is not OpenAI's. */
function providersYaml(mockUrl: string, keyEnv: string): string {
  return defaultYaml(mockUrl, keyEnv).replace('deployments:', `  - id: openai-main
    type: openai
    baseUrl: https://api.openai.com/v1
    apiKey: env:SY_TEST_UPSTREAM_KEY
  - id: anthropic-main
    type: anthropic
    baseUrl: https://api.anthropic.com
    apiKey: env:SY_TEST_UPSTREAM_KEY
  - id: local-vllm
    type: openai-compatible
    baseUrl: ${mockUrl}/v1
    allowPrivateNetwork: true   # the mock listens on loopback
    apiKey: env:SY_TEST_UPSTREAM_KEY
deployments:`);
}

// recorded_at, provider, model, input, cached, cache write, output, cost — what the ledger billed.
const LEDGER: Array<[string, string, string, number, number, number, number, string]> = [
  ['2025-03-01T09:10:00Z', 'openai-main', 'gpt-4o-mini', 1000, 200, 0, 300, '0.000315'],
  ['2025-03-01T17:45:00Z', 'openai-main', 'gpt-4o-mini', 500, 0, 0, 100, '0.000135'],
  ['2025-03-01T12:00:00Z', 'openai-main', 'gpt-4o', 2000, 0, 0, 500, '0.01'],
  ['2025-03-02T08:00:00Z', 'openai-main', 'gpt-4o-mini', 4000, 1000, 0, 1000, '0.001125'],
  ['2025-03-03T23:59:59.999Z', 'openai-main', 'gpt-4o', 1000, 500, 0, 200, '0.003875'],
  // Not on OpenAI's invoice: another provider type, and a day the export does not cover.
  ['2025-03-01T10:00:00Z', 'local-vllm', 'llama-3', 999, 0, 0, 999, '0.5'],
  ['2025-02-28T23:59:59Z', 'openai-main', 'gpt-4o-mini', 777, 0, 0, 77, '0.0001'],
  ['2025-03-01T11:00:00Z', 'anthropic-main', 'claude-3-5-haiku-20241022', 3000, 1000, 500, 600, '0.00418'],
  ['2025-03-02T11:00:00Z', 'anthropic-main', 'claude-3-5-haiku-20241022', 1000, 0, 0, 100, '0.0012'],
];

describe('switchyard reconcile: the ledger beside a provider export, per day and model', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-reconcile-'));
  const dataDir = join(dir, 'data');
  // PostgreSQL when available (each CLI run starts faster), else an embedded data directory.
  let scratch: { url: string; drop: () => Promise<void> } | null = null;
  let env: NodeJS.ProcessEnv = {};
  let files = 0;

  /** A copy of a fixture, edited. */
  function exportFile(name: string, edit: (document: any) => void = () => undefined): string {
    const document = fixture(name);
    edit(document);
    const path = join(dir, `${++files}-${name}`);
    writeFileSync(path, JSON.stringify(document));
    return path;
  }

  async function reconcile(provider: string, usage: string[], extra: string[] = []) {
    const result = await runCli(['reconcile', '--provider', provider, ...usage.flatMap((file) => ['--usage', file]), '--json', ...extra], env);
    return { ...result, report: result.stdout ? JSON.parse(result.stdout) : null };
  }

  beforeAll(async () => {
    scratch = process.env.DATABASE_URL ? await createScratchDatabase(process.env.DATABASE_URL) : null;
    if (!scratch) await seedMigratedDataDir(dataDir); // an embedded store without paying initdb and the migrations (migrated-template.ts)
    env = { ...process.env, SWITCHYARD_DATA_DIR: dataDir, DATABASE_URL: scratch?.url ?? '', CLICKHOUSE_URL: '', LOG_LEVEL: 'error' };
    const gw = await startTestGateway({ yaml: providersYaml, databaseUrl: scratch?.url ?? null, environment: { dataDir } });
    try {
      await gw.gateway.platform.committer.drain();
      for (const [index, [at, provider, model, input, cached, write, output, cost]] of LEDGER.entries()) {
        await gw.gateway.platform.database.query(
          `INSERT INTO cost_ledger (request_id, attempt, tenant_id, key_id, alias, deployment_id, provider_id, model, input_tokens,
             cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, price_version, outcome, usage_evidence,
             global_position, recorded_at)
           VALUES ($1, 1, 'acme', 'acme-app', 'chat', $2, $3, $2, $4, $5, $6, $7, 0, $8, 1, 'success', 'provider', $9, $10)`,
          [`seeded-${index}`, model, provider, input, cached, write, output, cost, index + 1, at],
        );
      }
    } finally {
      await gw.close();
    }
  }, 60_000);

  afterAll(async () => {
    await scratch?.drop();
  });

  test('OpenAI usage and cost exports that match the ledger: every day and model agrees, exit 0', async () => {
    const { code, report, stderr } = await reconcile('openai', [exportFile('openai-usage-completions.json'), exportFile('openai-costs.json')]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(report.providerIds).toEqual(['openai-main']);
    expect(report.days).toEqual({ from: '2025-03-01', to: '2025-03-03' });
    expect(report.lines.map((line: any) => [line.day, line.model, line.ledgerModels, line.providerModels])).toEqual([
      ['2025-03-01', 'gpt-4o', ['gpt-4o'], ['gpt-4o-2024-08-06']],
      ['2025-03-01', 'gpt-4o-mini', ['gpt-4o-mini'], ['gpt-4o-mini-2024-07-18']],
      ['2025-03-02', 'gpt-4o-mini', ['gpt-4o-mini'], ['gpt-4o-mini-2024-07-18']],
      ['2025-03-03', 'gpt-4o', ['gpt-4o'], ['gpt-4o-2024-08-06']],
    ]);
    expect(report.lines[1].ledger).toMatchObject({ attempts: 2, inputTokens: 1500, cachedInputTokens: 200, outputTokens: 400, costUsd: '0.000450000000' });
    expect(report.lines[1].provider).toMatchObject({ inputTokens: 1500, cachedInputTokens: 200, outputTokens: 400, costUsd: '0.00045' });
    expect(report.discrepancies).toEqual([]);
  });

  test('one injected token discrepancy in the usage export is reported, exactly that one', async () => {
    const usage = exportFile('openai-usage-completions.json', (document) => {
      document.data[1].results[0].output_tokens += 7;
    });
    const { code, report } = await reconcile('openai', [usage, exportFile('openai-costs.json')]);
    expect(code).toBe(1);
    expect(report.discrepancies).toEqual([
      { day: '2025-03-02', model: 'gpt-4o-mini', field: 'outputTokens', ledger: '1000', provider: '1007', difference: '7' },
    ]);
    // The table finance reads says the same.
    const table = await runCliProcess(['reconcile', '--provider', 'openai', '--usage', usage], env);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/2025-03-02\s+gpt-4o-mini\s+4000\s+4000\s+1000\s+1007\s+.*DIFFERS \(outputTokens\)/);
    expect(table.stdout).toContain('1 discrepancy:\n  2025-03-02 gpt-4o-mini outputTokens: ledger 1000, provider 1007 (difference 7)');
  });

  test('one injected cost discrepancy beyond the tolerance is reported; one within it is not', async () => {
    const costs = exportFile('openai-costs.json', (document) => {
      document.data[2].results[2].amount.value = 0.0125;
    });
    const { code, report } = await reconcile('openai', [costs]);
    expect(code).toBe(1);
    expect(report.discrepancies).toEqual([
      { day: '2025-03-03', model: 'gpt-4o', field: 'costUsd', ledger: '0.003875', provider: '0.014375', difference: '0.0105' },
    ]);
    const rounded = exportFile('openai-costs.json', (document) => {
      document.data[0].results[3].amount.value = 0.0051;
    });
    expect((await reconcile('openai', [rounded])).code).toBe(0);
    const strict = await reconcile('openai', [rounded], ['--tolerance', '0']);
    expect(strict.report.discrepancies).toEqual([
      { day: '2025-03-01', model: 'gpt-4o', field: 'costUsd', ledger: '0.01', provider: '0.0101', difference: '0.0001' },
    ]);
  });

  test('Anthropic usage and cost reports: cache reads and writes count as input; one injected discrepancy is that one', async () => {
    const matching = await reconcile('anthropic', [exportFile('anthropic-usage-report.json'), exportFile('anthropic-cost-report.json')]);
    expect(matching.code).toBe(0);
    expect(matching.report.providerIds).toEqual(['anthropic-main']);
    expect(matching.report.lines[0]).toMatchObject({
      day: '2025-03-01', model: 'claude-3-5-haiku',
      ledger: { inputTokens: 3000, cachedInputTokens: 1000, cacheWriteTokens: 500, outputTokens: 600, costUsd: '0.004180000000' },
      provider: { inputTokens: 3000, cachedInputTokens: 1000, cacheWriteTokens: 500, outputTokens: 600, costUsd: '0.00418' },
    });
    const usage = exportFile('anthropic-usage-report.json', (document) => {
      document.data[1].results[0].output_tokens = 90;
    });
    const { code, report } = await reconcile('anthropic', [usage, exportFile('anthropic-cost-report.json')]);
    expect(code).toBe(1);
    expect(report.discrepancies).toEqual([
      { day: '2025-03-02', model: 'claude-3-5-haiku', field: 'outputTokens', ledger: '100', provider: '90', difference: '-10' },
    ]);
  });

  test('unusable input is refused with exit 2 and says what to fix', async () => {
    const ungrouped = exportFile('openai-usage-completions.json', (document) => {
      document.data[0].results[0].model = null;
    });
    const notGrouped = await runCli(['reconcile', '--provider', 'openai', '--usage', ungrouped], env);
    expect(notGrouped.code).toBe(2);
    expect(notGrouped.stderr).toMatch(/not grouped by model \(export with group_by=model\)/);
    const anthropicToOpenAi = await runCli(['reconcile', '--provider', 'openai', '--usage', exportFile('anthropic-usage-report.json')], env);
    expect(anthropicToOpenAi.code).toBe(2);
    expect(anthropicToOpenAi.stderr).toMatch(/not an OpenAI usage or costs page/);
    const garbage = join(dir, 'garbage.json');
    writeFileSync(garbage, 'date,model,cost\n');
    expect((await runCli(['reconcile', '--provider', 'anthropic', '--usage', garbage], env)).stderr).toMatch(/not JSON/);
    expect((await runCli(['reconcile', '--provider', 'gemini', '--usage', garbage], env)).code).toBe(2);
    expect((await runCli(['reconcile', '--provider', 'openai'], env)).stderr).toMatch(/needs --usage FILE/);
  });
});
