import { SpendHistory, type SpendPeriodName } from '../../../modules/access/admin/spend-history.js';
import { readEnvironment } from '../../config/environment.js';
import { openPlatform } from '../../platform.js';

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
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    const rows = await new SpendHistory(platform.database).of(options.kind, options.id, options.period, options.from, options.to);
    if (options.json) {
      process.stdout.write(`${JSON.stringify({ [options.kind]: options.id, period: options.period, data: rows })}\n`);
    } else {
      process.stdout.write(`${options.period === 'day' ? 'day' : 'month'}\tspent_usd\t(${options.kind} ${options.id})\n`);
      for (const row of rows) process.stdout.write(`${options.period === 'day' ? row.periodStart.slice(0, 10) : row.periodStart.slice(0, 7)}\t${row.spentUsd}\n`);
    }
    return 0;
  } finally {
    await platform.close();
  }
}
