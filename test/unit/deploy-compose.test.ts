import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';
import { readObservabilitySettings } from '../../modules/observability/index.js';
import { RUNTIME_VARIABLES, healthRoutes, repoFile, settingsTheGatewayReads } from '../support/deploy-facts.js';

/**
 * The versions CI tests (.ci/run: Debian's PostgreSQL, Redis and ClickHouse packages). Where those servers
 * are installed, the test below checks that they still are these versions, so this table moves with CI.
 */
const CI_VERSIONS = { postgres: '15', redis: '7.0', clickhouse: '18.16' };

const compose = parse(repoFile('compose.yaml'));
const gateway = compose.services.gateway;

/** The major (PostgreSQL) or major.minor (Redis, ClickHouse) of a version string, or null. */
function release(text: string, parts: number): string | null {
  const match = /(\d+)\.(\d+)/.exec(text);
  return match ? match.slice(1, 1 + parts).join('.') : null;
}

function installedVersions(): Partial<Record<keyof typeof CI_VERSIONS, string>> {
  const found: Partial<Record<keyof typeof CI_VERSIONS, string>> = {};
  // .ci/run starts the cluster it finds in /etc/postgresql/<major>.
  if (existsSync('/etc/postgresql')) found.postgres = readdirSync('/etc/postgresql')[0];
  const redis = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (!redis.error) found.redis = release(redis.stdout.replace(/^.*v=/, ''), 2) ?? undefined;
  const clickhouse = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'clickhouse-server'], { encoding: 'utf8' });
  if (!clickhouse.error && clickhouse.status === 0 && clickhouse.stdout) found.clickhouse = release(clickhouse.stdout, 2) ?? undefined;
  return found;
}

describe('compose.yaml', () => {
  test('runs PostgreSQL, Redis and ClickHouse at the versions CI tests', () => {
    expect(compose.services.postgres.image).toBe(`postgres:${CI_VERSIONS.postgres}`);
    expect(compose.services.redis.image).toBe(`redis:${CI_VERSIONS.redis}`);
    // ClickHouse's images of the 18.x releases were published as yandex/clickhouse-server.
    expect(compose.services.clickhouse.image).toBe(`yandex/clickhouse-server:${CI_VERSIONS.clickhouse}`);
    const installed = installedVersions();
    const missing = (Object.keys(CI_VERSIONS) as Array<keyof typeof CI_VERSIONS>).filter((name) => installed[name] === undefined);
    if (missing.length) console.warn(`deploy-compose: not installed here, so not compared with CI: ${missing.join(', ')}`);
    for (const [name, version] of Object.entries(installed)) expect([name, version]).toEqual([name, CI_VERSIONS[name as keyof typeof CI_VERSIONS]]);
  });

  test('the gateway is built from the Dockerfile, on the port it exposes, and waits for every service to be healthy', () => {
    expect(gateway.build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
    const exposed = /^EXPOSE\s+(\d+)/m.exec(repoFile('Dockerfile'))![1];
    expect(gateway.ports).toEqual([`${exposed}:${exposed}`]);
    const others = Object.keys(compose.services).filter((name) => name !== 'gateway');
    expect(others.sort()).toEqual(['clickhouse', 'postgres', 'redis']);
    expect(gateway.depends_on).toEqual(Object.fromEntries(others.map((name) => [name, { condition: 'service_healthy' }])));
    for (const name of others) {
      expect(Array.isArray(compose.services[name].healthcheck.test)).toBe(true);
      expect(compose.services[name].healthcheck.test[0]).toBe('CMD');
      // Every service keeps its data in a named volume.
      const [volume] = String(compose.services[name].volumes[0]).split(':');
      expect(Object.keys(compose.volumes)).toContain(volume);
    }
  });

  test("the gateway's health check asks readiness on the gateway's port, as the image's does", () => {
    const check = gateway.healthcheck.test as string[];
    expect(check.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(check[3]).toContain(`http://127.0.0.1:${/^EXPOSE\s+(\d+)/m.exec(repoFile('Dockerfile'))![1]}${healthRoutes().readiness}'`);
  });

  test('every variable set on the gateway is a setting the gateway reads; the URLs name the services and their credentials', () => {
    const env = gateway.environment as Record<string, string>;
    const read = settingsTheGatewayReads();
    expect(Object.keys(env).filter((name) => !read.has(name) && !RUNTIME_VARIABLES.has(name))).toEqual([]);
    const postgres = compose.services.postgres.environment;
    const database = new URL(env.DATABASE_URL.replace(/\$\{[^}]+\}/, 'password'));
    expect([database.protocol, database.hostname, database.username, database.pathname]).toEqual(['postgres:', 'postgres', postgres.POSTGRES_USER, `/${postgres.POSTGRES_DB}`]);
    // The password is the one PostgreSQL gets, from .env (compose refuses to start without it), never a literal.
    expect(env.DATABASE_URL).toContain('${POSTGRES_PASSWORD:?');
    expect(postgres.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    expect(env.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?/);
    expect(new URL(env.REDIS_URL).hostname).toBe('redis');
    expect(new URL(env.CLICKHOUSE_URL).hostname).toBe('clickhouse');
  });

  test("the configuration is valid for the gateway's parser, and each file: reference is a secret compose mounts where references may read", () => {
    const env = gateway.environment as Record<string, string>;
    const mount = gateway.configs.find((config: { target: string }) => config.target === env.SWITCHYARD_CONFIG);
    expect(mount).toBeDefined();
    const text = compose.configs[mount.source].content as string;
    const config = parseGatewayConfig(text, 'compose.yaml');
    expect(config.providers.length).toBeGreaterThan(0);
    const references = [...text.matchAll(/\b(file|env):(\S+)/g)].map((match) => ({ kind: match[1], target: match[2] }));
    expect(references.length).toBeGreaterThan(0);
    for (const reference of references) {
      if (reference.kind === 'env') {
        expect(Object.keys(env)).toContain(reference.target);
        continue;
      }
      // Compose mounts a service's secrets at /run/secrets/<name>.
      expect(reference.target.startsWith(`${env.SWITCHYARD_SECRETS_DIR}/`)).toBe(true);
      const name = reference.target.slice('/run/secrets/'.length);
      expect(gateway.secrets).toContain(name);
      expect(compose.secrets[name].file).toBeDefined();
    }
    expect(env.SWITCHYARD_SECRETS_DIR).toBe('/run/secrets');
  });

  test("the data directory is a volume, and stopping waits past the gateway's shutdown deadline", () => {
    const dataDir = /^\s*SWITCHYARD_DATA_DIR=(\S+)/m.exec(repoFile('Dockerfile'))![1];
    expect(gateway.volumes).toEqual([`gateway-data:${dataDir}`]);
    const grace = /^(\d+)s$/.exec(gateway.stop_grace_period)!;
    expect(Number(grace[1]) * 1000).toBeGreaterThan(readObservabilitySettings({}).shutdownDeadlineMs + 5_000);
  });
});
