/**
 * Fault injection for the crash test, off by default: `SWITCHYARD_FAULT_INJECTION=clickhouse-after-insert`
 * kills this process (SIGKILL, no cleanup) right after a ClickHouse insert returns and before the
 * projection's checkpoint commits in PostgreSQL: the one window in which a naive writer double counts.
 */
export interface AnalyticsFaults {
  afterInsert(): void;
}

export const NO_FAULTS: AnalyticsFaults = { afterInsert: () => undefined };

export function analyticsFaults(env: NodeJS.ProcessEnv): AnalyticsFaults {
  if (env.SWITCHYARD_FAULT_INJECTION !== 'clickhouse-after-insert') return NO_FAULTS;
  return { afterInsert: () => process.kill(process.pid, 'SIGKILL') };
}
