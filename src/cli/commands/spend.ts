import { SpendHistory, type SpendPeriodName, type PeriodSpendRow } from '../../../modules/access/admin/spend-history.js';
import { readEnvironment } from '../../config/environment.js';
import { openPlatform } from '../../platform.js';
import { runningServer } from '../running-server.js';

export interface SpendOptions {
  kind: 'tenant' | 'key';
  id: string;
  period: SpendPeriodName;
  from: Date | null;
  to: Date | null;
  json: boolean;
}

/** `spend --tenant T | --key K`: spend by day or month from the ledger's read models, one line per period. */
export async function spendCommand(options: SpendOptions): Promise<number> {
  const rows = await spendRows(options);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ [options.kind]: options.id, period: options.period, data: rows })}\n`);
  } else {
    process.stdout.write(`${options.period === 'day' ? 'day' : 'month'}\tspent_usd\t(${options.kind} ${options.id})\n`);
    for (const row of rows) process.stdout.write(`${options.period === 'day' ? row.periodStart.slice(0, 10) : row.periodStart.slice(0, 7)}\t${row.spentUsd}\n`);
  }
  return 0;
}

/** From the running server holding the embedded store (its admin API), else from the store itself. */
async function spendRows(options: SpendOptions): Promise<PeriodSpendRow[]> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) {
    const query = new URLSearchParams({ period: options.period });
    if (options.from) query.set('from', options.from.toISOString());
    if (options.to) query.set('to', options.to.toISOString());
    const answer = await server.get<{ data: PeriodSpendRow[] }>(`/admin/v1/${options.kind === 'tenant' ? 'tenants' : 'keys'}/${encodeURIComponent(options.id)}/spend?${query}`);
    return answer.data;
  }
  const platform = await openPlatform(environment, { runDurable: false });
  try {
    return await new SpendHistory(platform.database).of(options.kind, options.id, options.period, options.from, options.to);
  } finally {
    await platform.close();
  }
}
