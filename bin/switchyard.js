#!/usr/bin/env node
// Builds on first use (a fresh clone has no dist/), then runs the CLI.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
execFileSync(process.execPath, [join(root, 'scripts', 'ensure-build.mjs')], { stdio: 'inherit', cwd: root });
await import(join(root, 'dist', 'src', 'main.js'));
