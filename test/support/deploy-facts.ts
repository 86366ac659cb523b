import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { HealthController } from '../../modules/observability/health.controller.js';

/**
 * What the deployment files (Dockerfile, compose.yaml, ops/systemd, ops/kubernetes) are checked against:
 * facts read from the code itself, so that a renamed setting or route makes their tests fail.
 */

/** The repository (tests run from dist/test/…, the files they check are at the top). */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export function repoFile(path: string): string {
  return readFileSync(join(REPO, path), 'utf8');
}

/** The gateway's sources (not tests, not the bench): where every setting it reads is read. */
const SOURCE_TREES = ['src', 'modules', 'events', 'projections', 'migrations'];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Every environment variable the gateway reads: `env.NAME`, `env['NAME']`, and whole string literals that
 * are setting names (the settings files pass them to helpers: `integerSetting(env, 'SWITCHYARD_…')`,
 * `positive('SWITCHYARD_IDLE_TIMEOUT_MS')`).
 */
export function settingsTheGatewayReads(): Set<string> {
  const names = new Set<string>();
  for (const file of SOURCE_TREES.flatMap(sourceFiles)) {
    const text = readFileSync(join(REPO, file), 'utf8');
    for (const match of text.matchAll(/\benv(?:\.|\[')([A-Z][A-Z0-9_]+)/g)) names.add(match[1]);
    for (const match of text.matchAll(/'((?:SWITCHYARD|OTEL)_[A-Z0-9_]+)'/g)) names.add(match[1]);
  }
  return names;
}

/** Variables a deployment file may set that the gateway does not read itself: Node's and glibc's own. */
export const RUNTIME_VARIABLES = new Set(['NODE_ENV', 'MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_']);

/** The probe routes, from the health controller's own route metadata (`/healthz`, `/readyz`). */
export function healthRoutes(): { liveness: string; readiness: string } {
  const path = (method: (...args: never[]) => unknown) => `/${String(Reflect.getMetadata(PATH_METADATA, method)).replace(/^\//, '')}`;
  return { liveness: path(HealthController.prototype.health), readiness: path(HealthController.prototype.ready) };
}

/** The CLI's commands, as its usage text lists them (`switchyard help`). */
export function cliCommands(usage: string): Set<string> {
  return new Set([...usage.matchAll(/^ {2}([a-z][a-z-]+)/gm)].map((match) => match[1]));
}
