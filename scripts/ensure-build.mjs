// Compiles TypeScript when dist/ is missing or older than a source, so that `npm start`, `npm test` and the
// `switchyard` bin work straight from a fresh clone. Two scopes:
//   serve — what serving and the CLI need (src, modules, events, projections, migrations: tsconfig.build.json);
//           the bin and `npm start` ask for this, so a first start does not compile the tests and benchmarks;
//   all   — the serving code plus test/ and bench/ (tsconfig.json), for `npm test` and `npm run bench`.
// Either scope also builds the web console (console/, Vite) into dist/console when a file of it is newer than
// its build: the gateway serves it at /console, so a fresh clone's `npm start` must have it.
// A release (the Dockerfile's runtime stage, a copied build) carries dist/ and production dependencies only:
// no tsconfig.json, no sources and no compiler, so there the build is taken as it is.
//
// Imported by bin/switchyard.js (in-process: a second Node process cost every CLI command ~0.1 s) and run as
// a script: `node scripts/ensure-build.mjs [serve|all]` (default all).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVING = { tsconfig: 'tsconfig.build.json', stamp: 'dist/.build.tsbuildinfo', sources: ['src', 'modules', 'events', 'projections', 'migrations'] };
const ALL = { tsconfig: 'tsconfig.json', stamp: 'dist/.tsbuildinfo', sources: [...SERVING.sources, 'test', 'bench'] };

function newest(path, counts = (name) => name.endsWith('.ts')) {
  let latest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(full, counts));
    else if (counts(entry.name)) latest = Math.max(latest, statSync(full).mtimeMs);
  }
  return latest;
}

/** When the build a stamp records was written; 0 without one. A type-check (--noEmit) may write a stamp, so dist/src must exist too. */
function builtAt(root, stamp) {
  const path = join(root, stamp);
  return existsSync(path) && existsSync(join(root, 'dist', 'src')) ? statSync(path).mtimeMs : 0;
}

/**
 * Compiles the scope's sources in `root` when any is newer than its build; returns whether it compiled.
 * `quiet`: no notice on stderr and the compiler's own output kept (a test's checkout of its own, whose
 * compiles would read as the run's in `npm test`'s output).
 */
export function ensureBuild(scope = 'serve', root = ROOT, { quiet = false } = {}) {
  if (!existsSync(join(root, 'tsconfig.json'))) {
    if (existsSync(join(root, 'dist', 'src', 'main.js'))) return false;
    throw new Error(`${root} has neither a build (dist/src/main.js) nor the sources to make one (tsconfig.json)`);
  }
  const build = scope === 'all' ? ALL : SERVING;
  // The full build contains the serving one: either stamp proves the serving code is compiled.
  const built = scope === 'all' ? builtAt(root, ALL.stamp) : Math.max(builtAt(root, SERVING.stamp), builtAt(root, ALL.stamp));
  const configs = ['tsconfig.json', build.tsconfig].map((file) => statSync(join(root, file)).mtimeMs);
  const changed = Math.max(...configs, ...build.sources.filter((s) => existsSync(join(root, s))).map((s) => newest(join(root, s))));
  const stale = changed > built;
  if (stale) compile(root, build, scope, quiet);
  ensureConsoleBuild(root, { quiet });
  return stale;
}

function compile(root, build, scope, quiet) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) throw new Error(`the sources are newer than the build and there is no compiler (${tsc}): run \`npm ci\` (with dev dependencies), or install a build`);
  if (!quiet) process.stderr.write(`switchyard: compiling TypeScript (${scope === 'all' ? 'serving code, tests and benchmarks' : 'serving code'})…\n`);
  execFileSync(process.execPath, [tsc, '-p', join(root, build.tsconfig)], { stdio: quiet ? 'pipe' : 'inherit', cwd: root });
}

/**
 * Builds the console (Vite) into dist/console when a file of console/ or the lock file (its toolchain and
 * libraries) is newer than dist/console/index.html; returns whether it built. A checkout without console/
 * (a release, a test's own checkout) has nothing to build.
 */
export function ensureConsoleBuild(root = ROOT, { quiet = false } = {}) {
  const sources = join(root, 'console');
  if (!existsSync(sources)) return false;
  const index = join(root, 'dist', 'console', 'index.html');
  const built = existsSync(index) ? statSync(index).mtimeMs : 0;
  const lock = join(root, 'package-lock.json');
  const changed = Math.max(newest(sources, () => true), existsSync(lock) ? statSync(lock).mtimeMs : 0);
  if (changed <= built) return false;
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite)) throw new Error(`the console's sources are newer than its build and there is no Vite (${vite}): run \`npm ci\` (with dev dependencies), or install a build`);
  if (!quiet) process.stderr.write('switchyard: building the web console…\n');
  execFileSync(process.execPath, [vite, 'build', '--config', join(sources, 'vite.config.ts'), '--logLevel', 'warn'], { stdio: quiet ? 'pipe' : 'inherit', cwd: root });
  return true;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const scope = process.argv[2] ?? 'all';
  if (scope !== 'serve' && scope !== 'all') {
    process.stderr.write(`usage: node scripts/ensure-build.mjs [serve|all]\n`);
    process.exit(2);
  }
  try {
    ensureBuild(scope);
  } catch (error) {
    process.stderr.write(`switchyard: ${error.message}\n`);
    process.exit(1);
  }
}
