#!/usr/bin/env node
// Builds the serving code on first use (a fresh clone has no dist/), then runs the CLI.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureBuild } from '../scripts/ensure-build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
try {
  ensureBuild('serve');
} catch (error) {
  process.stderr.write(`switchyard: ${error.message}\n`);
  process.exit(1);
}
await import(pathToFileURL(join(root, 'dist', 'src', 'main.js')).href);
