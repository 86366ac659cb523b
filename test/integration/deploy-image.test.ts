import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { NODE_FLAGS, SERVING_ENV } from '../../src/cli/serving-flags.js';
import { freePort } from '../support/cli-process.js';
import { REPO, RUNTIME_VARIABLES, healthRoutes, repoFile, settingsTheGatewayReads } from '../support/deploy-facts.js';

/**
 * The Dockerfile, carried out without Docker (there is none on CI's machine): it is parsed, each stage is
 * checked against CI and the code, and the runtime stage is performed in a temporary directory standing
 * for the image's root — its COPY steps copied, its `npm ci --omit=dev` run, its ENV set — and its
 * ENTRYPOINT started there, probed with its own HEALTHCHECK command, served one request and stopped with
 * its STOPSIGNAL. The build stage's RUN steps are CI's own commands, which produced the dist/ this suite
 * runs from; they are compared with .ci/run rather than run a second time.
 */

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  image: string;
  name: string;
  instructions: Instruction[];
}

/** Instructions (continuations joined, comments dropped) grouped by FROM. */
function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (!pending && /^\s*(#|$)/.test(line)) continue;
    if (pending && /^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push((pending + line).trim());
    pending = '';
  }
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s+(.*)$/.exec(line)!;
    if (keyword.toUpperCase() === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)!;
      stages.push({ image: from[1], name: from[2] ?? String(stages.length), instructions: [] });
    } else {
      stages[stages.length - 1].instructions.push({ keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' ') });
    }
  }
  return stages;
}

function all(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args);
}

function only(stage: Stage, keyword: string): string {
  const found = all(stage, keyword);
  if (found.length !== 1) throw new Error(`stage ${stage.name}: ${found.length} ${keyword} instructions`);
  return found[0];
}

/** `ENV a=1 b=2` (the form this Dockerfile uses) into pairs. */
function envOf(stage: Stage): Record<string, string> {
  return Object.fromEntries(all(stage, 'ENV').flatMap((args) => args.split(' ').map((pair) => pair.split('=') as [string, string])));
}

/** The install and build commands of .ci/run, without their redirections and error handling. */
function ciCommands(): { install: string; build: string } {
  const ci = repoFile('.ci/run');
  const install = /^npm ci[^>|&\n]*/m.exec(ci)![0].trim();
  const build = /\bnpm run build\b/.exec(ci)![0];
  return { install, build };
}

/** .dockerignore's patterns (this file uses plain paths and `**` prefixes only). */
function ignored(path: string): boolean {
  const patterns = repoFile('.dockerignore').split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
  return patterns.some((pattern) => {
    const plain = pattern.replace(/^\*\*\//, '');
    return path === plain || path.startsWith(`${plain}/`) || (pattern.startsWith('**/') && path.split('/').includes(plain));
  });
}

const stages = parseDockerfile(repoFile('Dockerfile'));
const [build, runtime] = stages;

describe('Dockerfile', () => {
  test('two stages, both on a pinned Node 20 image (the major CI runs and package.json allows)', () => {
    expect(stages.map((stage) => stage.name)).toEqual(['build', 'runtime']);
    for (const stage of stages) expect(stage.image).toMatch(/^node:20-[a-z]+-slim$/);
    expect(process.versions.node.split('.')[0]).toBe('20');
  });

  test("the build stage's RUN steps are CI's install and build commands, in CI's order", () => {
    const { install, build: compile } = ciCommands();
    expect(all(build, 'RUN')).toEqual([install, compile]);
  });

  test('the runtime stage installs production dependencies with the same command plus --omit=dev, and copies only the gateway', () => {
    const { install } = ciCommands();
    const [first, ...rest] = all(runtime, 'RUN');
    expect(first.split(' && ')[0]).toBe(install.replace(/^npm ci/, 'npm ci --omit=dev'));
    expect(rest.join(' ')).not.toMatch(/\bnpm (ci|install)\b/);
    const fromBuild = all(runtime, 'COPY').filter((args) => args.startsWith('--from=build'));
    const trees = fromBuild.map((args) => args.split(' ')[1].replace(`${only(build, 'WORKDIR')}/`, ''));
    expect(trees.sort()).toEqual(['dist/console', 'dist/events', 'dist/migrations', 'dist/modules', 'dist/projections', 'dist/src']);
    // No sources and no compiler configuration: production start must not need them.
    for (const args of all(runtime, 'COPY')) expect(args).not.toMatch(/tsconfig|\.ts\b/);
  });

  test('a fixed non-root user owns the data directory, which is the VOLUME and SWITCHYARD_DATA_DIR', () => {
    const user = only(runtime, 'USER');
    expect(user).toMatch(/^[1-9]\d{3,}:[1-9]\d{3,}$/);
    const [uid, gid] = user.split(':');
    const setup = all(runtime, 'RUN').join(' ');
    expect(setup).toContain(`groupadd --system --gid ${gid} `);
    expect(setup).toContain(`useradd --system --uid ${uid} --gid ${gid} `);
    const env = envOf(runtime);
    expect(only(runtime, 'VOLUME')).toBe(`["${env.SWITCHYARD_DATA_DIR}"]`);
    expect(setup).toContain(`chown ${uid}:${gid} ${env.SWITCHYARD_DATA_DIR}`);
    // USER comes after everything that needs root.
    const keywords = runtime.instructions.map((instruction) => instruction.keyword);
    expect(keywords.lastIndexOf('RUN')).toBeLessThan(keywords.indexOf('USER'));
  });

  test('ENV sets only settings the gateway reads; PORT is the exposed port; the serving flags and malloc settings are those of npm start', () => {
    const env = envOf(runtime);
    const read = settingsTheGatewayReads();
    expect(Object.keys(env).filter((name) => !read.has(name) && !RUNTIME_VARIABLES.has(name))).toEqual([]);
    expect(only(runtime, 'EXPOSE')).toBe(env.PORT);
    for (const [name, value] of Object.entries(SERVING_ENV)) expect(env[name]).toBe(value);
    expect(JSON.parse(only(runtime, 'ENTRYPOINT'))).toEqual(['node', ...NODE_FLAGS, 'bin/switchyard.js']);
    expect(JSON.parse(only(runtime, 'CMD'))).toEqual(['serve']);
    expect(only(runtime, 'STOPSIGNAL')).toBe('SIGTERM');
    expect(only(runtime, 'HEALTHCHECK')).toContain(`'${healthRoutes().readiness}'`);
  });

  test('.dockerignore keeps installed and built trees out of the context, and nothing a COPY needs', () => {
    for (const path of ['node_modules', 'dist', '.switchyard', '.git']) expect([path, ignored(path)]).toEqual([path, true]);
    for (const stage of stages) {
      for (const args of all(stage, 'COPY').filter((copy) => !copy.startsWith('--from='))) {
        const sources = args.split(' ').slice(0, -1).filter((source) => source !== '.');
        for (const source of sources) expect([source, ignored(source), existsSync(join(REPO, source))]).toEqual([source, false, true]);
      }
    }
    // The build stage's `COPY . .` brings what tsconfig.json compiles.
    const compiled = JSON.parse(repoFile('tsconfig.json')).include as string[];
    for (const tree of compiled) expect([tree, ignored(tree)]).toEqual([tree, false]);
  });
});

describe("Dockerfile's runtime stage, performed in a directory standing for the image", () => {
  let root: string;
  let gateway: ChildProcess | null = null;
  let output = '';
  let env: Record<string, string>;
  let port: number;

  /** A path of the image, inside the stand-in root. */
  const inImage = (path: string) => join(root, path);

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'switchyard-image-'));
    let workdir = '/';
    const imageEnv = envOf(runtime);
    for (const { keyword, args } of runtime.instructions) {
      if (keyword === 'WORKDIR') {
        workdir = args;
        mkdirSync(inImage(workdir), { recursive: true });
      } else if (keyword === 'COPY') {
        const words = args.split(' ');
        const from = words[0].startsWith('--from=') ? words.shift()!.slice('--from='.length) : null;
        const destination = words.pop()!;
        // The build stage is this checkout after CI's `npm run build` (its WORKDIR is the repository).
        const origin = (source: string) => (from === 'build' ? join(REPO, source.replace(`${only(build, 'WORKDIR')}/`, '')) : join(REPO, source));
        const target = destination.startsWith('/') ? inImage(destination) : inImage(join(workdir, destination));
        for (const source of words) {
          const into = destination.endsWith('/') ? join(target, source.split('/').pop()!) : target;
          mkdirSync(dirname(into), { recursive: true });
          cpSync(origin(source), into, { recursive: true });
        }
      } else if (keyword === 'RUN') {
        for (const command of args.split(' && ')) {
          if (command.startsWith('npm ci')) {
            // The registry is reached as CI's `npm ci` reaches it; the machine's cache is preferred.
            execFileSync('npm', command.split(' ').slice(1), { cwd: inImage(workdir), stdio: 'pipe', env: { ...process.env, npm_config_prefer_offline: 'true' } });
          } else if (command.startsWith('mkdir -p ')) {
            mkdirSync(inImage(command.slice('mkdir -p '.length)), { recursive: true });
          }
          // groupadd, useradd and chown need root and change the machine (checked above); `npm cache clean`
          // would empty this machine's cache, which the image does not share.
        }
      }
    }
    port = await freePort();
    // The image's environment only: nothing of this process's (a DATABASE_URL of the test run, say).
    env = {
      ...imageEnv,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: root,
      PORT: String(port),
      SWITCHYARD_DATA_DIR: inImage(imageEnv.SWITCHYARD_DATA_DIR),
    };
    const [command, ...args] = [...JSON.parse(only(runtime, 'ENTRYPOINT')), ...JSON.parse(only(runtime, 'CMD'))] as string[];
    gateway = spawn(command === 'node' ? process.execPath : command, args, { cwd: inImage(workdir), env, stdio: ['ignore', 'pipe', 'pipe'] });
    gateway.stdout!.on('data', (chunk) => (output += chunk));
    gateway.stderr!.on('data', (chunk) => (output += chunk));
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (gateway.exitCode !== null) throw new Error(`the gateway exited (${gateway.exitCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`the gateway did not answer within 120 s:\n${output}`);
      const ready = await fetch(`http://127.0.0.1:${port}${healthRoutes().readiness}`).then((response) => response.ok, () => false);
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }, 300_000);

  afterAll(async () => {
    if (gateway && gateway.exitCode === null && gateway.signalCode === null) {
      const exited = new Promise((resolve) => gateway!.once('exit', resolve));
      gateway.kill('SIGKILL');
      await exited;
    }
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** The image's HEALTHCHECK command, run as Docker runs it: its exit code. */
  function healthCheck(): number | null {
    const [node, ...args] = JSON.parse(/CMD (\[.*\])$/.exec(only(runtime, 'HEALTHCHECK'))![1]) as string[];
    expect(node).toBe('node');
    return spawnSync(process.execPath, args, { env, timeout: 10_000 }).status;
  }

  test('the image holds no sources and no compiler: the start needed neither', () => {
    const app = inImage(only(runtime, 'WORKDIR'));
    expect(existsSync(join(app, 'tsconfig.json'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(join(app, 'node_modules', 'jest'))).toBe(false);
    expect(readdirSync(join(app, 'dist')).sort()).toEqual(['console', 'events', 'migrations', 'modules', 'projections', 'src']);
    expect(output).not.toContain('compiling TypeScript');
  });

  test('its HEALTHCHECK passes against the started gateway; the embedded store is in the data directory', () => {
    expect(healthCheck()).toBe(0);
    expect(readdirSync(env.SWITCHYARD_DATA_DIR).length).toBeGreaterThan(0);
    expect(output).toContain(`event store: embedded PGlite at ${env.SWITCHYARD_DATA_DIR}`);
  });

  test('it serves a chat completion with the demo key, /docs from the copied OpenAPI document, and the built console', async () => {
    const key = /Demo key: (sk-sy-\S+)/.exec(output)![1];
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'Hello!' }] }),
    });
    expect(response.status).toBe(200);
    const body: any = await response.json();
    expect(body.choices[0].message.content.length).toBeGreaterThan(0);
    expect((await fetch(`http://127.0.0.1:${port}/docs`)).status).toBe(200);
    // The console as the build stage built it: the page, and the script it names.
    const page = await fetch(`http://127.0.0.1:${port}/console/`);
    expect(page.status).toBe(200);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await page.text())![1];
    expect((await fetch(`http://127.0.0.1:${port}${script}`)).status).toBe(200);
  });

  test('its STOPSIGNAL ends it cleanly (exit 0), after which its HEALTHCHECK fails', async () => {
    const exited = new Promise<number | null>((resolve) => gateway!.once('exit', (code) => resolve(code)));
    gateway!.kill(only(runtime, 'STOPSIGNAL') as NodeJS.Signals);
    expect(await exited).toBe(0);
    expect(healthCheck()).toBe(1);
  }, 60_000);
});
