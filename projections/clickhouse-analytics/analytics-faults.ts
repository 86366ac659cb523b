import { type SettingsEnv, declareSettings, textSetting } from '../../src/kernel/index.js';

export const ANALYTICS_FAULTS_ENVIRONMENT = declareSettings('projections/clickhouse-analytics', {
  SWITCHYARD_FAULT_INJECTION: {
    type: '`clickhouse-after-insert`',
    default: 'unset: no fault',
    meaning: 'tests only: kills the process (SIGKILL) between a ClickHouse insert and its checkpoint, the window in which a naive writer double counts',
  },
});

/**
 * Fault injection for the crash test, off by default: `SWITCHYARD_FAULT_INJECTION=clickhouse-after-insert`
 * kills this process (SIGKILL, no cleanup) right after a ClickHouse insert returns and before the
 * projection's checkpoint commits in PostgreSQL: the one window in which a naive writer double counts.
 */
export interface AnalyticsFaults {
  afterInsert(): void;
}

export const NO_FAULTS: AnalyticsFaults = { afterInsert: () => undefined };

export function analyticsFaults(env: SettingsEnv): AnalyticsFaults {
  if (textSetting(env, ANALYTICS_FAULTS_ENVIRONMENT.SWITCHYARD_FAULT_INJECTION) !== 'clickhouse-after-insert') return NO_FAULTS;
  return { afterInsert: () => process.kill(process.pid, 'SIGKILL') };
}
