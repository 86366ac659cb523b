import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Code the docs show is the code the tests run: these read it from between its markers. */
const doc = (name: string) => readFileSync(fileURLToPath(new URL(`../../../docs/${name}`, import.meta.url)), 'utf8');

/** The SQL blocks of a docs page between `<!-- name:start -->` and `<!-- name:end -->` (finance queries: analytics.md). */
export function docsSqlBlocks(page: string, name: string): string[] {
  const section = new RegExp(`<!-- ${name}:start -->([\\s\\S]*?)<!-- ${name}:end -->`).exec(doc(page));
  if (!section) throw new Error(`docs/${page} has no ${name} section`);
  return [...section[1].matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1].trim());
}

/** The offline verifier exactly as docs/audit.md shows it (between its markers). */
export function docsExportVerifier(): string {
  const match = /<!-- audit-export-verifier:start -->\s*```js\n([\s\S]*?)```\s*<!-- audit-export-verifier:end -->/.exec(doc('audit.md'));
  if (!match) throw new Error('docs/audit.md has no audit-export-verifier block');
  return match[1];
}
