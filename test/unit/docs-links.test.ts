import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPOSITORY_ROOT, markdownFiles } from '../support/docs-files.js';

/**
 * The docs are one web of pages: a newcomer follows links from the README to a guide, to a section of
 * another guide, to a generated reference. A link that points nowhere (a moved section, a renamed file) is a
 * dead end, so every relative link and every #anchor in README.md and docs/**\/*.md must resolve, with
 * GitHub's rules for the anchors of headings.
 */
const root = REPOSITORY_ROOT;

function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

/** The page's lines outside fenced code blocks (a `[x](y)` in a code sample is not a link). */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** GitHub's anchor for a heading (github-slugger): the rendered text, lower case, punctuation dropped, spaces → '-'. */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .replace(/(^|\s)_+|_+(\s|$)/g, '$1$2');
  return rendered.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' slugs (a repeated slug gets -1, -2, … as on GitHub). */
function anchorsOf(path: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(readFileSync(path, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = headingSlug(heading[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Inline links `[text](target)` outside code, with their line numbers. */
function linksOf(path: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  let fenced = false;
  readFileSync(path, 'utf8').split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const match of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ line: index + 1, target: match[1] });
  });
  return links;
}

const pages = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];

/** Every relative link that does not resolve, as `page:line → target (why)`. */
function deadLinks(): string[] {
  const dead: string[] = [];
  for (const page of pages) {
    for (const { line, target } of linksOf(page)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not ours to check offline
      const [pathPart, anchor] = target.split('#', 2);
      const file = pathPart === '' ? page : resolve(dirname(page), decodeURIComponent(pathPart));
      const where = `${relative(root, page)}:${line} → ${target}`;
      if (!existsSync(file)) {
        dead.push(`${where} (no such file)`);
        continue;
      }
      if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(anchor)) dead.push(`${where} (no such heading)`);
    }
  }
  return dead;
}

test('GitHub heading anchors: lower case, punctuation dropped, spaces to hyphens, code and links rendered', () => {
  expect(headingSlug('Keys, limits and budgets')).toBe('keys-limits-and-budgets');
  expect(headingSlug('The CLI against a running gateway')).toBe('the-cli-against-a-running-gateway');
  expect(headingSlug('`switchyard projector` — durable projections')).toBe('switchyard-projector--durable-projections');
  expect(headingSlug('Routing (and [resilience](x.md))')).toBe('routing-and-resilience');
  expect(headingSlug('What a provider says is a claim')).toBe('what-a-provider-says-is-a-claim');
});

test('every relative link and #anchor in README.md and docs/ resolves', () => {
  expect(pages.length).toBeGreaterThan(10);
  expect(deadLinks()).toEqual([]);
});

test('docs/README.md, the table of contents, links every file in docs/', () => {
  const index = join(root, 'docs', 'README.md');
  const linked = new Set(linksOf(index).map(({ target }) => resolve(dirname(index), target.split('#')[0])));
  const unlisted = allFiles(join(root, 'docs')).filter((file) => file !== index && !linked.has(file)).map((file) => relative(root, file));
  expect(unlisted).toEqual([]);
});

test('every guide longer than a screen starts with its own table of contents', () => {
  const long = markdownFiles(join(root, 'docs'))
    .filter((file) => !file.includes(`${join('docs', 'reference')}`) && readFileSync(file, 'utf8').split('\n').length > 60);
  expect(long.length).toBeGreaterThan(5);
  const without = long.filter((file) => !readFileSync(file, 'utf8').split('\n').slice(0, 20).some((line) => /^## Contents\s*$/.test(line)));
  expect(without.map((file) => relative(root, file))).toEqual([]);
});
