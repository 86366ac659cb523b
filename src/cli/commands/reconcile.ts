import { Decimal } from 'decimal.js';
import { readFileSync } from 'node:fs';
import { parseAnthropicExport } from '../../../modules/analytics/reconciliation/anthropic-usage-export.js';
import { parseOpenAiExport } from '../../../modules/analytics/reconciliation/openai-usage-export.js';
import { type ProviderUsage, UsageExportError } from '../../../modules/analytics/reconciliation/provider-usage.js';
import { type LedgerUsage, type ReconciliationLine, ledgerUsage, providersOfType, reconcile } from '../../../modules/analytics/reconciliation/reconcile.js';
import { readEnvironment } from '../../config/environment.js';
import { openPlatform } from '../../platform.js';
import { runningServer } from '../running-server.js';

export type ReconciledProvider = 'openai' | 'anthropic';

export interface ReconcileOptions {
  provider: ReconciledProvider;
  usageFiles: string[];
  /** The provider accounts the export belongs to; default every provider of that type. */
  providerIds: string[];
  toleranceUsd: string;
  json: boolean;
}

/**
 * `switchyard reconcile`: the check finance runs before paying an invoice. Exit 0 when every day and
 * model matches, 1 when anything differs (each difference is listed), 2 for unusable input.
 */
export async function reconcileCommand(options: ReconcileOptions): Promise<number> {
  let records: ProviderUsage[];
  try {
    records = options.usageFiles.flatMap((file) => {
      let document: unknown;
      try {
        document = JSON.parse(readFileSync(file, 'utf8'));
      } catch (error) {
        throw new UsageExportError(`${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'not JSON'}`);
      }
      return options.provider === 'openai' ? parseOpenAiExport(document, file) : parseAnthropicExport(document, file);
    });
  } catch (error) {
    if (error instanceof UsageExportError) {
      process.stderr.write(`switchyard reconcile: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (records.length === 0) {
    process.stderr.write('switchyard reconcile: the export holds no usage\n');
    return 2;
  }
  const days = records.map((r) => r.day).sort();
  const { providerIds, ledger } = await ledgerSide(options, days[0], days[days.length - 1]);
  if (providerIds.length === 0) {
    process.stderr.write(`switchyard reconcile: no provider of type ${options.provider} is configured; name the ledger's provider with --provider-id\n`);
    return 2;
  }
  const report = reconcile(ledger, records, new Decimal(options.toleranceUsd));
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ provider: options.provider, providerIds, ...report })}\n`);
  } else {
    process.stdout.write(`reconciling ${options.provider} (ledger providers: ${providerIds.join(', ')}) ${report.days?.from} … ${report.days?.to}\n`);
    process.stdout.write(table(report.lines));
    process.stdout.write(report.discrepancies.length
      ? `${report.discrepancies.length} discrepanc${report.discrepancies.length === 1 ? 'y' : 'ies'}:\n${report.discrepancies
        .map((d) => `  ${d.day} ${d.model} ${d.field}: ledger ${d.ledger}, provider ${d.provider} (difference ${d.difference})`).join('\n')}\n`
      : `all ${report.lines.length} day/model lines match (tokens exactly, cost within $${options.toleranceUsd})\n`);
  }
  return report.discrepancies.length ? 1 : 0;
}

/** The ledger's usage for the export's days: from the running server holding the embedded store, else from the store. */
async function ledgerSide(options: ReconcileOptions, fromDay: string, toDay: string): Promise<{ providerIds: string[]; ledger: LedgerUsage[] }> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) {
    const query = new URLSearchParams({ providerType: options.provider, from: fromDay, to: toDay });
    if (options.providerIds.length) query.set('providerId', options.providerIds.join(','));
    const answer = await server.get<{ providerIds: string[]; data: Array<Omit<LedgerUsage, 'costUsd'> & { costUsd: string }> }>(`/admin/v1/analytics/ledger-usage?${query}`);
    return { providerIds: answer.providerIds, ledger: answer.data.map((row) => ({ ...row, costUsd: new Decimal(row.costUsd) })) };
  }
  const platform = await openPlatform(environment, { runDurable: false });
  try {
    const providerIds = options.providerIds.length ? options.providerIds : await providersOfType(platform.database, options.provider);
    return { providerIds, ledger: providerIds.length ? await ledgerUsage(platform.database, providerIds, fromDay, toDay) : [] };
  } finally {
    await platform.close();
  }
}

function table(lines: readonly ReconciliationLine[]): string {
  const header = ['day', 'model', 'input ledger', 'input provider', 'output ledger', 'output provider', 'cost ledger', 'cost provider', 'status'];
  const rows = lines.map((line) => [
    line.day, line.model,
    String(line.ledger?.inputTokens ?? 0), line.provider?.inputTokens === null || !line.provider ? '-' : String(line.provider.inputTokens),
    String(line.ledger?.outputTokens ?? 0), line.provider?.outputTokens === null || !line.provider ? '-' : String(line.provider.outputTokens),
    new Decimal(line.ledger?.costUsd ?? 0).toFixed(6), line.provider?.costUsd ? new Decimal(line.provider.costUsd).toFixed(6) : '-',
    line.discrepancies.length ? `DIFFERS (${line.discrepancies.map((d) => d.field).join(', ')})` : 'ok',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((row) => row.map((cell, i) => (i < 2 || i === row.length - 1 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ').trimEnd()).join('\n') + '\n';
}
