import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's top (tests run from dist/test/…; the docs are read where they are written). */
export const REPOSITORY_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

/** Every Markdown file below `dir`, at any depth. */
export function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

