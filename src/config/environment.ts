import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { DURABILITY_PROFILES, type DurabilityProfile } from '../../modules/inference/pipeline/durability.js';

/** Everything configured through environment variables (DESIGN §8). */
export interface Environment {
  port: number;
  host: string;
  /** YAML applied at start; null = the built-in demo. */
  configPath: string | null;
  /** PGlite's directory; `:memory:` keeps everything in memory (tests). */
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  clickhouseUrl: string | null;
  adminToken: string | null;
  durability: DurabilityProfile;
  pollIntervalMs: number;
  nodeId: string;
  logLevel: 'error' | 'warn' | 'log' | 'debug';
}

export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

export function readEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const port = integer(env.PORT, 8080, 'PORT');
  const durability = (env.SWITCHYARD_DURABILITY ?? 'default') as DurabilityProfile;
  if (!DURABILITY_PROFILES.includes(durability)) {
    throw new ConfigurationError(`SWITCHYARD_DURABILITY must be one of ${DURABILITY_PROFILES.join(', ')}`);
  }
  let configPath = env.SWITCHYARD_CONFIG ? resolve(env.SWITCHYARD_CONFIG) : null;
  if (!configPath && existsSync('switchyard.yaml')) configPath = resolve('switchyard.yaml');
  const logLevel = (env.LOG_LEVEL ?? 'log') as Environment['logLevel'];
  return {
    port,
    host: env.HOST || '127.0.0.1',
    configPath,
    dataDir: env.SWITCHYARD_DATA_DIR === ':memory:' ? ':memory:' : resolve(env.SWITCHYARD_DATA_DIR || '.switchyard'),
    databaseUrl: env.DATABASE_URL || null,
    redisUrl: env.REDIS_URL || null,
    clickhouseUrl: env.CLICKHOUSE_URL || null,
    adminToken: env.ADMIN_TOKEN || null,
    durability,
    pollIntervalMs: integer(env.SWITCHYARD_POLL_MS, 1000, 'SWITCHYARD_POLL_MS'),
    nodeId: env.SWITCHYARD_NODE_ID || `${hostname()}:${process.pid}`,
    logLevel: ['error', 'warn', 'log', 'debug'].includes(logLevel) ? logLevel : 'log',
  };
}

function integer(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new ConfigurationError(`${name} must be a non-negative integer`);
  return parsed;
}
