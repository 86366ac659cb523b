import { ADMIN_ENVIRONMENT } from '../../modules/admin/admin-settings.js';
import { CACHE_ENVIRONMENT } from '../../modules/cache/cache-settings.js';
import { HTTP_ENVIRONMENT } from '../../modules/inference/http/http-settings.js';
import { DURABILITY_ENVIRONMENT } from '../../modules/inference/pipeline/durability.js';
import { RESILIENCE_ENVIRONMENT } from '../../modules/inference/resilience/resilience-settings.js';
import { ADMISSION_ENVIRONMENT } from '../../modules/limits/admission-settings.js';
import { OBSERVABILITY_ENVIRONMENT } from '../../modules/observability/observability-settings.js';
import { AUDIT_ENVIRONMENT } from '../../projections/audit-chain/index.js';
import { ANALYTICS_FAULTS_ENVIRONMENT } from '../../projections/clickhouse-analytics/index.js';
import { CLI_ENVIRONMENT } from '../cli/cli-environment.js';
import { MALLOC_ENVIRONMENT } from '../cli/serving-flags.js';
import { ENGINE_THREAD_ENVIRONMENT } from '../kernel/database/engine-thread-heap.js';
import { EVENT_STORE_ENVIRONMENT } from '../kernel/event-store/event-store-settings.js';
import { SPOOL_ENVIRONMENT } from '../kernel/event-store/spool/spool-settings.js';
import { SECRET_REFERENCE_ENVIRONMENT } from '../kernel/secret-references/secret-reference-policy.js';
import { type SettingDeclaration, settingList } from '../kernel/setting-declaration.js';
import { SERVING_ENVIRONMENT } from './environment-settings.js';

/**
 * Every environment variable Switchyard reads, each declared once by the concept that reads it, in the
 * order the reference lists them (the serving basics first, test-only switches last). A settings file
 * whose declarations are missing here fails test/unit/reference-docs.test.ts.
 */
export const ENVIRONMENT_SETTINGS: readonly (readonly SettingDeclaration[])[] = [
  SERVING_ENVIRONMENT,
  EVENT_STORE_ENVIRONMENT,
  ADMIN_ENVIRONMENT,
  DURABILITY_ENVIRONMENT,
  SPOOL_ENVIRONMENT,
  SECRET_REFERENCE_ENVIRONMENT,
  AUDIT_ENVIRONMENT,
  OBSERVABILITY_ENVIRONMENT,
  ADMISSION_ENVIRONMENT,
  RESILIENCE_ENVIRONMENT,
  HTTP_ENVIRONMENT,
  CACHE_ENVIRONMENT,
  MALLOC_ENVIRONMENT,
  ENGINE_THREAD_ENVIRONMENT,
  CLI_ENVIRONMENT,
  ANALYTICS_FAULTS_ENVIRONMENT,
].map(settingList);
