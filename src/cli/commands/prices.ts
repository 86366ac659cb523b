import { CommandBus } from '@nestjs/cqrs';
import { NestFactory } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { PriceCommand } from '../../../modules/catalog/catalog.commands.js';
import { PriceMapError, PRICE_MAP_FIELDS } from '../../../modules/catalog/price/litellm-price-map.js';
import type { PriceTable } from '../../../events/index.js';
import { type ImportedDeployment, importPrices, type PriceImportReport } from '../../../modules/catalog/price/price-import.js';
import { readEnvironment } from '../../config/environment.js';
import { openPlatform } from '../../platform.js';
import { installPublicationGuard } from '../../publication-guard.js';
import { parserOptions } from '../cli-commands.js';
import { CliModule } from '../cli.module.js';
import { parseJsonExactNumbers } from '../exact-json.js';
import { writeOut } from '../output.js';
import { runningServer } from '../running-server.js';

export interface PricesImportOptions {
  file: string;
  dryRun: boolean;
  effectiveFrom: Date | null;
  verbose: boolean;
  json: boolean;
}

/** The options `prices import` was given, or what is wrong with them (a usage problem, exit 2). */
export function pricesImportOptions(args: string[]): PricesImportOptions | string {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: parserOptions('prices import') });
  if (positionals.length !== 1) return 'prices import needs one FILE (a LiteLLM model_prices_and_context_window.json)';
  const effectiveFrom = values['effective-from'] === undefined ? null : new Date(values['effective-from']);
  if (effectiveFrom && Number.isNaN(effectiveFrom.getTime())) return '--effective-from must be an ISO-8601 timestamp';
  return { file: positionals[0], dryRun: values['dry-run'] ?? false, effectiveFrom, verbose: values.verbose ?? false, json: values.json ?? false };
}

/**
 * `prices import FILE`: schedules the map's prices for the deployments it matches, through the running
 * server's admin API (the embedded store) or the Price aggregate on the store itself, actor recorded.
 */
export async function pricesImport(options: PricesImportOptions): Promise<number> {
  let map: unknown;
  try {
    map = parseJsonExactNumbers(readFileSync(options.file, 'utf8'));
  } catch (error) {
    process.stderr.write(`${options.file} is not a readable JSON price map: ${(error as Error).message}. Nothing was imported.\n`);
    return 1;
  }
  let report: PriceImportReport;
  try {
    report = await importReport(relevantFields(map), options);
  } catch (error) {
    if (!(error instanceof PriceMapError)) throw error;
    process.stderr.write(`${error.message} Nothing was imported.\n`);
    return 1;
  }
  await writeOut(options.json ? `${JSON.stringify(report)}\n` : reportText(report));
  return 0;
}

async function importReport(map: unknown, options: PricesImportOptions): Promise<PriceImportReport> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) {
    return server.post<PriceImportReport>('/admin/v1/prices/import', {
      map, dryRun: options.dryRun, verbose: options.verbose, ...(options.effectiveFrom ? { effectiveFrom: options.effectiveFrom.toISOString() } : {}),
    });
  }
  const platform = await openPlatform(environment, { runDurable: false });
  try {
    installPublicationGuard(platform);
    await platform.runner.start();
    const app = await NestFactory.createApplicationContext(CliModule.forRoot(platform), { logger: ['error', 'warn'] });
    try {
      const bus = app.get(CommandBus);
      const now = new Date();
      const actor = `cli:${safeUser()}`;
      return await importPrices(map, platform.routing.state, { dryRun: options.dryRun, effectiveFrom: options.effectiveFrom ?? now, verbose: options.verbose, now },
        (command) => bus.execute(new PriceCommand.Message(command, { now: new Date(), actor })));
    } finally {
      await app.close();
    }
  } finally {
    await platform.close();
  }
}

/**
 * Only what the import reads of each entry (the whole file is well over a megabyte): the costs, the
 * provider and the mode. Anything that is not an entry object is passed on as it is, for the import to refuse.
 */
function relevantFields(map: unknown): unknown {
  if (typeof map !== 'object' || map === null || Array.isArray(map)) return map;
  const kept = ['litellm_provider', 'mode', ...Object.keys(PRICE_MAP_FIELDS)];
  return Object.fromEntries(Object.entries(map).map(([key, entry]) => [
    key,
    typeof entry === 'object' && entry !== null && !Array.isArray(entry)
      ? Object.fromEntries(Object.entries(entry).filter(([field]) => kept.includes(field)))
      : entry,
  ]));
}

function reportText(report: PriceImportReport): string {
  const lines = report.deployments.map((d) => `${d.deployment} (${d.model} on ${d.provider}, ${d.providerType}): ${changeText(d, report.dryRun)}`);
  const c = report.counts;
  lines.push(
    `${report.dryRun ? 'dry run: nothing appended; would schedule' : 'scheduled'} ${c.schedule} price version${c.schedule === 1 ? '' : 's'} effective from ${report.effectiveFrom}; ` +
      `${c.unchanged} unchanged, ${c.noEntry} with no entry in the map${c.ambiguous ? `, ${c.ambiguous} ambiguous (kept)` : ''}.`,
    `The map: ${c.unmatchedEntries} priced ${c.unmatchedEntries === 1 ? 'entry matches' : 'entries match'} no deployment${report.unmatchedEntries ? '' : ' (--verbose lists them)'}; ` +
      `${c.unpricedEntries} ${c.unpricedEntries === 1 ? 'entry has' : 'entries have'} no price per input and output token.`,
  );
  for (const entry of report.unmatchedEntries ?? []) lines.push(`  unmatched: ${entry}`);
  return `${lines.join('\n')}\n`;
}

function changeText(d: ImportedDeployment, dryRun: boolean): string {
  switch (d.outcome) {
    case 'schedule':
      return `${priceText(d.current)} → ${priceText(d.proposed)} (entry "${d.entry}")${dryRun ? '' : `, price version ${d.priceVersion}`}`;
    case 'unchanged':
      return `unchanged (entry "${d.entry}")`;
    case 'no-entry':
      return `no entry in the map; keeps ${priceText(d.current)}`;
    case 'ambiguous':
      return `ambiguous: ${d.entries.map((e) => `"${e}"`).join(', ')} price it differently; keeps ${priceText(d.current)}`;
  }
}

/** `input 0.15, output 0.6, cached input 0.075`: a price table in the units the admin API uses (USD per 1M tokens). */
function priceText(table: PriceTable | null): string {
  if (!table) return 'no price';
  const parts = [`input ${table.inputPer1M}`, `output ${table.outputPer1M}`];
  if (table.cachedInputPer1M !== null) parts.push(`cached input ${table.cachedInputPer1M}`);
  if (table.cacheWritePer1M !== null) parts.push(`cache write ${table.cacheWritePer1M}`);
  if (table.reasoningPer1M !== null) parts.push(`reasoning ${table.reasoningPer1M}`);
  return parts.join(', ');
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
