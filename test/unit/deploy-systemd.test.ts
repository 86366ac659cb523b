import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_FLAGS, SERVING_ENV } from '../../src/cli/serving-flags.js';
import { readObservabilitySettings } from '../../modules/observability/index.js';
import { REPO, RUNTIME_VARIABLES, cliCommands, repoFile, settingsTheGatewayReads } from '../support/deploy-facts.js';

/** The release directory the units expect (ExecStart, WorkingDirectory): the repository's top level there. */
const RELEASE = '/opt/switchyard';
const UNITS = ['switchyard.service', 'switchyard-projector.service'];

type Unit = Map<string, Map<string, string[]>>;

/** Sections → keys → values in order (a key may repeat, e.g. Environment=). */
function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section: Map<string, string[]> | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = new Map();
      unit.set(header[1], section);
      continue;
    }
    const eq = line.indexOf('=');
    if (!section || eq < 0) throw new Error(`not a unit line: ${line}`);
    const key = line.slice(0, eq);
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1)]);
  }
  return unit;
}

function one(unit: Unit, section: string, key: string): string {
  const values = unit.get(section)?.get(key) ?? [];
  if (values.length !== 1) throw new Error(`[${section}] ${key}: ${values.length} values`);
  return values[0];
}

function environment(unit: Unit): Record<string, string> {
  return Object.fromEntries((unit.get('Service')?.get('Environment') ?? []).map((assignment) => {
    const eq = assignment.indexOf('=');
    return [assignment.slice(0, eq), assignment.slice(eq + 1)];
  }));
}

const units = Object.fromEntries(UNITS.map((name) => [name, parseUnit(repoFile(`ops/systemd/${name}`))]));
const gateway = units['switchyard.service'];
/** The CLI's usage, from the entry the units start (once: loading the CLI takes seconds). */
let usage: string | null = null;
const cliUsage = (entry: string) => (usage ??= execFileSync(process.execPath, [entry, 'help'], { encoding: 'utf8' }));
const projector = units['switchyard-projector.service'];

describe('ops/systemd units', () => {
  test('systemd-analyze verify accepts both units without a warning (where systemd is installed)', () => {
    const analyzer = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (analyzer.error) {
      console.warn('deploy-systemd: systemd-analyze is not installed here (Debian: apt-get install systemd); the units were not verified by systemd');
      return;
    }
    // verify reads drop-ins and siblings from the unit's directory: a copy keeps the repository out of it.
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-units-'));
    try {
      for (const name of UNITS) copyFileSync(join(REPO, 'ops/systemd', name), join(dir, name));
      const result = spawnSync('systemd-analyze', ['verify', '--man=no', ...UNITS.map((name) => join(dir, name))], { encoding: 'utf8' });
      // Unknown keys are only warnings (exit 0): any output at all is a finding.
      expect(`${result.stdout}${result.stderr}`.trim()).toBe('');
      expect(result.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.each(UNITS)('%s starts node with the serving flags on the real CLI entry, with a command the CLI has', (name) => {
    const [node, ...args] = one(units[name], 'Service', 'ExecStart').split(/\s+/);
    expect(node).toBe('/usr/bin/node');
    expect(args.slice(0, NODE_FLAGS.length)).toEqual([...NODE_FLAGS]);
    const [entry, command, ...rest] = args.slice(NODE_FLAGS.length);
    expect(rest).toEqual([]);
    expect(entry.startsWith(`${RELEASE}/`)).toBe(true);
    const inRepository = join(REPO, entry.slice(RELEASE.length + 1));
    expect(existsSync(inRepository)).toBe(true);
    expect(one(units[name], 'Service', 'WorkingDirectory')).toBe(RELEASE);
    expect(cliCommands(cliUsage(inRepository))).toContain(command);
    expect(command).toBe(name === 'switchyard.service' ? 'serve' : 'projector');
  });

  test.each(UNITS)('%s sets only settings the gateway reads, and the malloc settings of npm start', (name) => {
    const env = environment(units[name]);
    const read = settingsTheGatewayReads();
    const unknown = Object.keys(env).filter((variable) => !read.has(variable) && !RUNTIME_VARIABLES.has(variable));
    expect(unknown).toEqual([]);
    for (const [variable, value] of Object.entries(SERVING_ENV)) expect(env[variable]).toBe(value);
    expect(one(units[name], 'Service', 'EnvironmentFile')).toBe('/etc/switchyard/switchyard.env');
  });

  test('the gateway unit: its state directory is the data directory, file: references read its credentials', () => {
    const env = environment(gateway);
    expect(one(gateway, 'Service', 'StateDirectory')).toBe('switchyard');
    expect(env.SWITCHYARD_DATA_DIR).toBe('/var/lib/switchyard');
    const [credentialName] = one(gateway, 'Service', 'LoadCredential').split(':');
    expect(credentialName).toBe('switchyard');
    // systemd puts credentials in /run/credentials/<unit name>/.
    expect(env.SWITCHYARD_SECRETS_DIR).toBe('/run/credentials/switchyard.service');
    expect(env.SWITCHYARD_CONFIG.startsWith('/etc/switchyard/')).toBe(true);
  });

  test('stopping gives the graceful shutdown its deadline and the settling after it; only node gets SIGTERM', () => {
    const deadlineMs = readObservabilitySettings({}).shutdownDeadlineMs;
    const settleMs = 5_000;
    expect(Number(one(gateway, 'Service', 'TimeoutStopSec')) * 1000).toBeGreaterThan(deadlineMs + settleMs);
    expect(one(gateway, 'Service', 'KillSignal')).toBe('SIGTERM');
    // With SWITCHYARD_WORKERS the primary stops its workers itself; a SIGTERM to every process would race it.
    expect(one(gateway, 'Service', 'KillMode')).toBe('mixed');
    for (const unit of [gateway, projector]) expect(one(unit, 'Service', 'Restart')).toBe('on-failure');
  });

  test.each(UNITS)('%s is hardened: its own unprivileged user, a read-only system, no privileges to gain', (name) => {
    const unit = units[name];
    for (const [key, value] of Object.entries({
      DynamicUser: 'yes', NoNewPrivileges: 'yes', ProtectSystem: 'strict', ProtectHome: 'yes', PrivateTmp: 'yes',
      PrivateDevices: 'yes', RestrictSUIDSGID: 'yes', CapabilityBoundingSet: '',
    })) {
      expect([key, one(unit, 'Service', key)]).toEqual([key, value]);
    }
    // V8 compiles code at run time: this protection would kill node at its first JIT.
    expect(unit.get('Service')?.has('MemoryDenyWriteExecute')).toBe(false);
    expect(one(unit, 'Install', 'WantedBy')).toBe('multi-user.target');
  });
});
