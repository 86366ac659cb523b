// Compiles TypeScript when dist/ is missing or older than any source file, so that `npm start`,
// `npm test` and the `switchyard` bin work straight from a fresh clone. A release (the Dockerfile's
// runtime stage, a copied build) carries dist/ and production dependencies only: no tsconfig.json, no
// sources and no compiler, so there the build is taken as it is.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.tsbuildinfo');
const sources = ['src', 'modules', 'events', 'projections', 'migrations', 'test', 'bench'];

if (!existsSync(join(root, 'tsconfig.json'))) {
  if (existsSync(join(root, 'dist', 'src', 'main.js'))) process.exit(0);
  process.stderr.write(`switchyard: ${root} has neither a build (dist/src/main.js) nor the sources to make one (tsconfig.json)\n`);
  process.exit(1);
}

function newest(path) {
  let latest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(full));
    else if (entry.name.endsWith('.ts')) latest = Math.max(latest, statSync(full).mtimeMs);
  }
  return latest;
}

// The stamp alone is not proof of a build (a type-check with --noEmit may have written one): dist/src must exist too.
const built = existsSync(stamp) && existsSync(join(root, 'dist', 'src')) ? statSync(stamp).mtimeMs : 0;
const changed = Math.max(statSync(join(root, 'tsconfig.json')).mtimeMs, ...sources.filter((s) => existsSync(join(root, s))).map((s) => newest(join(root, s))));
if (changed > built) {
  process.stderr.write('switchyard: compiling TypeScript…\n');
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.json')], { stdio: 'inherit', cwd: root });
}
