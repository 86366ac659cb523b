/**
 * The platform kernel's public surface: what modules, projections and events may use. The kernel
 * imports nothing from modules/, projections/, events/ or the bootstrap (enforced by eslint-rules/);
 * its storage adapters (PGlite, PostgreSQL, TypeORM data source) are the bootstrap's business only.
 */
export * from './canonical-json.js';
export * from './clock.js';
export * from './event-loop-turn.js';
export * from './configuration-error.js';
export * from './ids.js';
export * from './abort-scope.js';
export * from './request-scoped.js';
export * from './same-hash.js';
export * from './settings.js';
export * from './setting-declaration.js';
export * from './tokens.js';
export * from './commands/command-executor.js';
export * from './commands/decider-command.js';
export * from './commands/decider.js';
export * from './commands/domain-event.js';
export * from './database/connection-loss.js';
export * from './database/database.js';
export type { CopyValue } from './database/copy-rows.js';
export { workerWithSemiSpace } from './database/engine-thread-heap.js';
export * from './event-store/errors.js';
export * from './event-store/event-store.js';
export * from './event-store/group-committer.js';
export * from './event-store/log-position.js';
export * from './event-store/sql-event-store.js';
export { READ_HORIZON_SQL } from './event-store/read-horizon.js';
export { OutageSpool, SpoolFullError } from './event-store/spool/outage-spool.js';
export * from './projections/projection-checkpoints.js';
export * from './projections/projection-halts.js';
export * from './projections/projection-positions.js';
export { classifyFailure } from './projections/projection-failure.js';
export * from './projections/projection-runner.js';
export * from './projections/projection.js';
export * from './redaction/redact-text.js';
export * from './secret-references/known-secrets.js';
export * from './secret-references/secret-reference.js';
export * from './definitions/config-fields.js';
export * from './definitions/definition-reader.js';
