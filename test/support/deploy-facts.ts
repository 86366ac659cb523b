import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { HealthController } from '../../modules/observability/health.controller.js';
import { ENVIRONMENT_SETTINGS } from '../../src/config/settings-registry.js';

/**
 * What the deployment files (Dockerfile, compose.yaml, ops/systemd, ops/kubernetes) are checked against:
 * facts read from the code itself, so that a renamed setting or route makes their tests fail.
 */

/** The repository (tests run from dist/test/…, the files they check are at the top). */
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export function repoFile(path: string): string {
  return readFileSync(join(REPO, path), 'utf8');
}

/**
 * Every environment variable the gateway reads: the settings registry, which a test holds equal to what the
 * sources read (test/unit/reference-docs.test.ts), and from which docs/reference/environment.md is generated.
 */
export function settingsTheGatewayReads(): Set<string> {
  return new Set(ENVIRONMENT_SETTINGS.flatMap((group) => group.settings.map((setting) => setting.name)));
}

/** Variables a deployment file may set that no setting declares: Node's own (glibc's are declared, serving-flags.ts). */
export const RUNTIME_VARIABLES = new Set(['NODE_ENV']);

/** The probe routes, from the health controller's own route metadata (`/healthz`, `/readyz`). */
export function healthRoutes(): { liveness: string; readiness: string } {
  const path = (method: (...args: never[]) => unknown) => `/${String(Reflect.getMetadata(PATH_METADATA, method)).replace(/^\//, '')}`;
  return { liveness: path(HealthController.prototype.health), readiness: path(HealthController.prototype.ready) };
}

/** The CLI's commands, as its usage text lists them (`switchyard help`). */
export function cliCommands(usage: string): Set<string> {
  return new Set([...usage.matchAll(/^ {2}([a-z][a-z-]+)/gm)].map((match) => match[1]));
}
