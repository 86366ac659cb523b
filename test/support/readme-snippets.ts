import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Code the README shows is the code the tests run: these read it from between its markers. */
const readme = () => readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');

/** The README's SQL blocks between `<!-- name:start -->` and `<!-- name:end -->`. */
export function readmeSqlBlocks(name: string): string[] {
  const section = new RegExp(`<!-- ${name}:start -->([\\s\\S]*?)<!-- ${name}:end -->`).exec(readme());
  if (!section) throw new Error(`README.md has no ${name} section`);
  return [...section[1].matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1].trim());
}

/** The offline verifier exactly as the README shows it (between its markers). */
export function readmeExportVerifier(): string {
  const text = readme();
  const match = /<!-- audit-export-verifier:start -->\s*```js\n([\s\S]*?)```\s*<!-- audit-export-verifier:end -->/.exec(text);
  if (!match) throw new Error('README.md has no audit-export-verifier block');
  return match[1];
}
