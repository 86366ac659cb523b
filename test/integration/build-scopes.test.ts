import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync, copyFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO } from '../support/deploy-facts.js';

/**
 * `scripts/ensure-build.mjs` decides what a start and a test run compile: `serve` (the bin, `npm start`) only the
 * serving trees, `all` (`npm test`, `npm run bench`) the tests and benchmarks too, each only when a source is
 * newer than its build. Exercised on a checkout of its own — the repository's two tsconfig files, a source file
 * in a serving tree and one in test/, the real compiler — so each case compiles a few lines, not the gateway.
 */
type EnsureBuild = (scope: 'serve' | 'all', root: string, options: { quiet: boolean }) => boolean;
type EnsureConsoleBuild = (root: string, options: { quiet: boolean }) => boolean;

let ensureBuildModule: EnsureBuild;
let ensureConsoleBuild: EnsureConsoleBuild;
/** Quiet: its compiles are this suite's, not the run's (they would read as such in `npm test`'s output). */
const ensureBuild = (scope: 'serve' | 'all', at: string) => ensureBuildModule(scope, at, { quiet: true });
let root: string;

/**
 * An edit of `path` after the last builds: every source and tsconfig is made two minutes old, the builds' stamps one minute,
 * and the file is written now. (Moving the file into the future instead would outrun a compile quicker than the
 * step, and the next check would still see the file newer than the stamp the compile just wrote.)
 */
function edit(path: string, text?: string): void {
  const age = (file: string, ms: number) => utimesSync(file, new Date(Date.now() - ms), new Date(Date.now() - ms));
  for (const tree of ['src', 'test']) for (const file of readdirSync(join(root, tree))) age(join(root, tree, file), 120_000);
  for (const config of ['tsconfig.json', 'tsconfig.build.json']) age(join(root, config), 120_000);
  for (const stamp of ['.build.tsbuildinfo', '.tsbuildinfo']) {
    const file = join(root, 'dist', stamp);
    if (existsSync(file)) age(file, 60_000);
  }
  if (text !== undefined) writeFileSync(path, text);
  const now = new Date();
  utimesSync(path, now, now);
}

beforeAll(async () => {
  const script = (await import(pathToFileURL(join(REPO, 'scripts', 'ensure-build.mjs')).href)) as { ensureBuild: EnsureBuild; ensureConsoleBuild: EnsureConsoleBuild };
  ensureBuildModule = script.ensureBuild;
  ensureConsoleBuild = script.ensureConsoleBuild;
  root = mkdtempSync(join(tmpdir(), 'switchyard-build-scopes-'));
  copyFileSync(join(REPO, 'tsconfig.json'), join(root, 'tsconfig.json'));
  copyFileSync(join(REPO, 'tsconfig.build.json'), join(root, 'tsconfig.build.json'));
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'test'));
  writeFileSync(join(root, 'src', 'main.ts'), 'export const serving: string = "serving";\n');
  writeFileSync(join(root, 'test', 'main.test.ts'), 'import { serving } from "../src/main.js";\nexport const tested: string = serving;\n');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('ensure-build', () => {
  test('serve on a fresh checkout compiles the serving trees only, once', () => {
    expect(ensureBuild('serve', root)).toBe(true);
    expect(readFileSync(join(root, 'dist', 'src', 'main.js'), 'utf8')).toContain('serving');
    expect(existsSync(join(root, 'dist', 'test'))).toBe(false);
    expect(ensureBuild('serve', root)).toBe(false);
  });

  test('a changed test leaves serve alone; all compiles the tests (and serve then stays satisfied)', () => {
    edit(join(root, 'test', 'main.test.ts'));
    expect(ensureBuild('serve', root)).toBe(false);
    expect(ensureBuild('all', root)).toBe(true);
    expect(existsSync(join(root, 'dist', 'test', 'main.test.js'))).toBe(true);
    expect(ensureBuild('all', root)).toBe(false);
    expect(ensureBuild('serve', root)).toBe(false);
  });

  test('a changed serving source recompiles for serve, and all still sees itself behind', () => {
    edit(join(root, 'src', 'main.ts'), 'export const serving: string = "edited";\n');
    expect(ensureBuild('serve', root)).toBe(true);
    expect(readFileSync(join(root, 'dist', 'src', 'main.js'), 'utf8')).toContain('edited');
    expect(ensureBuild('all', root)).toBe(true);
  });

  test('sources newer than the build without a compiler: a clear error, nothing run', () => {
    const bare = mkdtempSync(join(tmpdir(), 'switchyard-build-bare-'));
    try {
      copyFileSync(join(REPO, 'tsconfig.json'), join(bare, 'tsconfig.json'));
      copyFileSync(join(REPO, 'tsconfig.build.json'), join(bare, 'tsconfig.build.json'));
      mkdirSync(join(bare, 'src'));
      writeFileSync(join(bare, 'src', 'main.ts'), 'export {};\n');
      expect(() => ensureBuild('serve', bare)).toThrow(/no compiler .*npm ci/);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  test('a release (dist/ without tsconfig.json) is taken as it is; one with neither is refused by name', () => {
    const release = mkdtempSync(join(tmpdir(), 'switchyard-build-release-'));
    try {
      expect(() => ensureBuild('serve', release)).toThrow(/neither a build \(dist\/src\/main\.js\) nor the sources/);
      mkdirSync(join(release, 'dist', 'src'), { recursive: true });
      writeFileSync(join(release, 'dist', 'src', 'main.js'), '');
      expect(ensureBuild('serve', release)).toBe(false);
    } finally {
      rmSync(release, { recursive: true, force: true });
    }
  });

  test('the console (console/, Vite) is built into dist/console when a file of it is newer than the build, and only then', () => {
    const checkout = mkdtempSync(join(tmpdir(), 'switchyard-build-console-'));
    try {
      // No console/: nothing to build (a release, or a checkout of the serving code only).
      expect(ensureConsoleBuild(checkout, { quiet: true })).toBe(false);
      cpSync(join(REPO, 'console'), join(checkout, 'console'), { recursive: true });
      symlinkSync(join(REPO, 'node_modules'), join(checkout, 'node_modules'));
      expect(ensureConsoleBuild(checkout, { quiet: true })).toBe(true);
      const index = readFileSync(join(checkout, 'dist', 'console', 'index.html'), 'utf8');
      const script = /src="\/console\/(assets\/[^"]+\.js)"/.exec(index)![1];
      expect(existsSync(join(checkout, 'dist', 'console', script))).toBe(true);
      expect(ensureConsoleBuild(checkout, { quiet: true })).toBe(false);
      const built = statSync(join(checkout, 'dist', 'console', 'index.html')).mtimeMs;
      const source = join(checkout, 'console', 'src', 'format.ts');
      utimesSync(source, new Date(built + 1_000), new Date(built + 1_000));
      expect(ensureConsoleBuild(checkout, { quiet: true })).toBe(true);
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  }, 60_000);

  test('console sources newer than their build without Vite: a clear error', () => {
    const bare = mkdtempSync(join(tmpdir(), 'switchyard-build-console-bare-'));
    try {
      mkdirSync(join(bare, 'console'));
      writeFileSync(join(bare, 'console', 'index.html'), '<!doctype html>\n');
      expect(() => ensureConsoleBuild(bare, { quiet: true })).toThrow(/no Vite .*npm ci/);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});
