// Writes the reference pages generated from the code (docs/reference/*.md) from the compiled build;
// `npm run docs:generate` builds first. With --check it writes nothing and exits 1 when a committed page
// differs from what the code renders (test/unit/reference-docs.test.ts checks the same in the suite).
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const { REFERENCE_PAGES } = await import(pathToFileURL(join(root, 'dist', 'src', 'config', 'reference', 'reference-pages.js')).href);

let stale = 0;
for (const { path, render } of REFERENCE_PAGES) {
  const file = join(root, path);
  const text = render();
  const current = existsSync(file) ? readFileSync(file, 'utf8') : null;
  if (current === text) {
    process.stdout.write(`${path}: up to date\n`);
  } else if (check) {
    stale += 1;
    process.stdout.write(`${path} is stale: run npm run docs:generate\n`);
  } else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    process.stdout.write(`${path}: written\n`);
  }
}
process.exit(stale > 0 ? 1 : 0);
