import { ADMIN_ENVIRONMENT } from '../../modules/admin/admin-settings.js';
import { CACHE_ENVIRONMENT } from '../../modules/cache/cache-settings.js';
import { CONSOLE_ENVIRONMENT } from '../../modules/console/console-settings.js';
import { CONTENT_SAFETY_ENVIRONMENT } from '../../modules/content-safety/content-safety-settings.js';
import { HTTP_ENVIRONMENT } from '../../modules/inference/http/http-settings.js';
import { DOCUMENT_ENVIRONMENT } from '../../modules/inference/pipeline/document-settings.js';
import { DURABILITY_ENVIRONMENT } from '../../modules/inference/pipeline/durability.js';
import { RESILIENCE_ENVIRONMENT } from '../../modules/inference/resilience/resilience-settings.js';
import { ADMISSION_ENVIRONMENT } from '../../modules/limits/admission-settings.js';
import { OBSERVABILITY_ENVIRONMENT } from '../../modules/observability/observability-settings.js';
import { RELAY_ENVIRONMENT } from '../../modules/relay/relay-settings.js';
import { AUDIT_ENVIRONMENT } from '../../projections/audit-chain/index.js';
import { ANALYTICS_ENVIRONMENT, ANALYTICS_FAULTS_ENVIRONMENT } from '../../projections/clickhouse-analytics/index.js';
import { CONSUMER_ENVIRONMENT } from '../../modules/consumers/consumer-settings.js';
import { WEBHOOK_ENVIRONMENT } from '../../modules/consumers/webhook-settings.js';
import { CLI_ENVIRONMENT } from '../cli/cli-environment.js';
import { LOG_COLOUR_ENVIRONMENT } from '../log-colours.js';
import { MALLOC_ENVIRONMENT } from '../cli/serving-flags.js';
import { ENGINE_THREAD_ENVIRONMENT } from '../kernel/database/engine-thread-heap.js';
import { EVENT_STORE_ENVIRONMENT } from '../kernel/event-store/event-store-settings.js';
import { SPOOL_ENVIRONMENT } from '../kernel/event-store/spool/spool-settings.js';
import { SECRET_REFERENCE_ENVIRONMENT } from '../kernel/secret-references/secret-reference-policy.js';
import { type SettingDeclaration, settingList } from '../kernel/setting-declaration.js';
import { SERVING_ENVIRONMENT } from './environment-settings.js';

/** One section of the reference: a title for the reader, and the declarations of one concept. */
export interface SettingsGroup {
  readonly title: string;
  readonly settings: readonly SettingDeclaration[];
}

const group = (title: string, declarations: Readonly<Record<string, SettingDeclaration>>): SettingsGroup => ({ title, settings: settingList(declarations) });

/**
 * Every environment variable Switchyard reads, each declared once by the concept that reads it, in the
 * order the reference lists them (the serving basics first, test-only switches last). A variable read
 * without a declaration here fails test/unit/reference-docs.test.ts.
 */
export const ENVIRONMENT_SETTINGS: readonly SettingsGroup[] = [
  group('Serving', SERVING_ENVIRONMENT),
  group('Event store', EVENT_STORE_ENVIRONMENT),
  group('Admin API', ADMIN_ENVIRONMENT),
  group('Console', CONSOLE_ENVIRONMENT),
  group('Durability', DURABILITY_ENVIRONMENT),
  group('Outage spool', SPOOL_ENVIRONMENT),
  group('Secret references', SECRET_REFERENCE_ENVIRONMENT),
  group('Audit trail', AUDIT_ENVIRONMENT),
  group('Logs, metrics, traces, health', OBSERVABILITY_ENVIRONMENT),
  group('Admission', ADMISSION_ENVIRONMENT),
  group('Content safety', CONTENT_SAFETY_ENVIRONMENT),
  group('Deadlines, retries, circuit breakers', RESILIENCE_ENVIRONMENT),
  group('Client connections', HTTP_ENVIRONMENT),
  group('Documents', DOCUMENT_ENVIRONMENT),
  group('Exact cache and idempotency', CACHE_ENVIRONMENT),
  group('Events out (relay)', RELAY_ENVIRONMENT),
  group('Events out (consumers)', CONSUMER_ENVIRONMENT),
  group('Events out (webhooks consumer)', WEBHOOK_ENVIRONMENT),
  group('ClickHouse analytics', ANALYTICS_ENVIRONMENT),
  group('Memory allocator (glibc)', MALLOC_ENVIRONMENT),
  group('Embedded engine thread', ENGINE_THREAD_ENVIRONMENT),
  group('Log colour', LOG_COLOUR_ENVIRONMENT),
  group('CLI', CLI_ENVIRONMENT),
  group('Tests only', ANALYTICS_FAULTS_ENVIRONMENT),
];
