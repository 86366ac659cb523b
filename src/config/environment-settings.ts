import { declareSettings, inlineCode } from '../kernel/setting-declaration.js';

export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = '127.0.0.1';
/** Read from the working directory when SWITCHYARD_CONFIG is unset. */
export const DEFAULT_CONFIG_FILE = 'switchyard.yaml';
export const LOG_LEVELS = ['error', 'warn', 'log', 'debug'] as const;
export const DEFAULT_LOG_LEVEL = 'log';
export const DEFAULT_POLL_MS = 1000;
/** SWITCHYARD_LISTEN values that turn LISTEN/NOTIFY off. */
export const LISTEN_OFF = ['off', 'false', '0', 'no'] as const;

/** The variables the bootstrap reads itself (readEnvironment): how a node serves, and where its shared stores are. */
export const SERVING_ENVIRONMENT = declareSettings('src/config', {
  PORT: { type: 'integer ≥ 0', default: `\`${DEFAULT_PORT}\``, meaning: 'HTTP port' },
  HOST: { type: 'address', default: `\`${DEFAULT_HOST}\``, meaning: 'bind address (`0.0.0.0` to serve other machines)' },
  SWITCHYARD_CONFIG: {
    type: 'path',
    default: `\`./${DEFAULT_CONFIG_FILE}\` if present, else the built-in demo`,
    meaning: 'the configuration file applied at start (see configuration.md)',
  },
  LOG_LEVEL: {
    type: LOG_LEVELS.map(inlineCode).join(' | '),
    default: `\`${DEFAULT_LOG_LEVEL}\``,
    meaning: "the log's threshold (prompts, completions and keys are never logged); the framework's route table only at `debug`. An unknown level counts as `log`",
  },
  REDIS_URL: { type: 'Redis URL', default: 'unset: in-process', meaning: 'shared rate limits, concurrency leases, exact cache, idempotency and breaker signals across nodes' },
  CLICKHOUSE_URL: {
    type: 'URL',
    default: 'unset: analytics served from PostgreSQL',
    meaning: 'ClickHouse analytics, `http://[user:pass@]host:8123[/database]` (database default `switchyard`)',
  },
  SWITCHYARD_WORKERS: {
    type: 'integer ≥ 1, or `auto` (one per core)',
    default: '`1`',
    meaning: 'HTTP worker processes of this node (node:cluster); more than one needs DATABASE_URL',
  },
  SWITCHYARD_PROJECTOR: {
    type: '`embedded` | `external`',
    default: '`embedded`',
    meaning:
      'where the durable projections (ledger and tenant spend, audit chain, ClickHouse analytics) run: `embedded` in the serving process (with SWITCHYARD_WORKERS, in its primary); ' +
      '`external`: this process runs none of them and a `switchyard projector` does; PostgreSQL only',
  },
  SWITCHYARD_POLL_MS: { type: 'integer ≥ 0 (ms)', default: `\`${DEFAULT_POLL_MS}\``, meaning: 'projection polling interval (the fallback when a NOTIFY is lost)' },
  SWITCHYARD_LISTEN: {
    type: '`on`, or one of ' + LISTEN_OFF.map(inlineCode).join(', '),
    default: '`on`',
    meaning: 'wake projections by LISTEN/NOTIFY; `off` behind connection poolers without LISTEN (PgBouncer in transaction mode): polling alone keeps nodes current',
  },
  SWITCHYARD_NODE_ID: {
    type: 'text',
    default: '`host:pid`',
    meaning: "this node's name in event metadata, Redis connections and `GET /admin/v1/status`",
  },
});
