#!/usr/bin/env node
// Checks that the README split of issue 33 lost no fact: every non-trivial line of the README as it was
// before the split (commit 7667a25, 1,832 lines) must still appear in README.md or docs/**/*.md.
//
//   node scripts/readme-facts.mjs            # compares against `git show 7667a25:README.md`
//   node scripts/readme-facts.mjs OLD.md     # compares against another file
//   node scripts/readme-facts.mjs --verbose  # also prints each line the exceptions below cover
//
// A line counts as present when its normalised text (markdown emphasis, code ticks, link targets, list
// markers, a leading run-in bold heading and whitespace removed; see `normalise`) is a substring of the normalised text of the docs, joined
// into one string, so text that moved and was re-wrapped is still found. Lines shorter than 24 characters
// after normalising, headings, table separators and code fences are trivial and not checked. The only lines allowed to
// be missing are the ones in EXCEPTIONS: tables whose content is now generated from the code into
// docs/reference/, and statements that were stale and are corrected. Exit status 1 lists anything else missing.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const BASE_COMMIT = '7667a25';

/**
 * Line ranges of the old README (1-based, inclusive, at 7667a25) that are allowed to be missing, and why.
 * Ranges, not text, because the old file is pinned: they cannot drift.
 */
const EXCEPTIONS = [
  { from: 70, to: 99, why: 'the environment table: generated into docs/reference/environment.md (its prose facts are in docs/configuration.md, "The environment")' },
  { from: 389, to: 413, why: 'the parameter table: generated into docs/reference/parameters.md' },
  { from: 936, to: 958, why: "the CLI synopsis: generated from the CLI's own help into docs/reference/cli.md" },
  { from: 679, to: 679, why: 'a pointer "(below)" to the analytics API, now a link to docs/analytics.md' },
  { from: 1589, to: 1589, why: 'a pointer "(Configuration; …)" to a README section, now a link to docs/operations.md' },
  { from: 41, to: 66, why: 'how the tests run: rewritten in docs/testing.md for the two-group runner (npm test no longer runs one suite at a time)' },
  { from: 1484, to: 1509, why: 'the stale Layout section and its import rule: corrected in docs/architecture.md ("The top-level folders", "The rule, and how CI enforces it")' },
];

/** Markdown-neutral text: what a reader sees, without layout. */
export function normalise(line) {
  return line
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link keeps its text; targets change when sections move
    .replace(/^\s*([-*>]\s|\d+\.\s)/, '') // list and quote markers
    .replace(/^\*\*[^*]+(\.\*\*|\*\* —)\s+/, '') // a run-in bold heading ("**Metrics** — …"): guides make it a real heading
    .replace(/[`*]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function isTrivial(raw, text) {
  if (text.length < 24) return true;
  if (/^#{1,6}\s/.test(raw)) return true; // section titles change when sections move; the text under them is checked
  if (/^\|?[\s:|-]+\|?$/.test(raw.trim())) return true; // table separator
  if (/^```/.test(raw.trim()) || /^<!--.*-->$/.test(raw.trim())) return true;
  return false;
}

function markdownFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

function main() {
  const args = process.argv.slice(2);
  const verbose = args.includes('--verbose');
  const file = args.find((a) => !a.startsWith('--'));
  const old = file ? readFileSync(file, 'utf8') : execFileSync('git', ['show', `${BASE_COMMIT}:README.md`], { cwd: root, encoding: 'utf8' });
  const sources = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
  const corpus = sources.map((path) => readFileSync(path, 'utf8').split('\n').map(normalise).join(' ')).join(' ');

  const missing = [];
  const excused = new Map(EXCEPTIONS.map((e) => [e, []]));
  let checked = 0;
  old.split('\n').forEach((raw, index) => {
    const number = index + 1;
    const text = normalise(raw);
    if (isTrivial(raw, text)) return;
    checked++;
    if (corpus.includes(text)) return;
    const exception = EXCEPTIONS.find((e) => number >= e.from && number <= e.to);
    if (exception) excused.get(exception).push({ number, text });
    else missing.push({ number, text });
  });

  console.log(`${checked} non-trivial lines of README.md at ${file ?? BASE_COMMIT} checked against ${sources.length} files (${sources.map((s) => relative(root, s)).join(', ')})`);
  for (const [exception, lines] of excused) {
    console.log(`replaced (lines ${exception.from}-${exception.to}, ${lines.length} not found): ${exception.why}`);
    if (verbose) for (const line of lines) console.log(`    ${line.number}: ${line.text}`);
  }
  if (missing.length === 0) {
    console.log('nothing else missing');
    return;
  }
  console.log(`MISSING: ${missing.length} line(s) of the old README are in neither README.md nor docs/:`);
  for (const line of missing) console.log(`  ${line.number}: ${line.text}`);
  process.exitCode = 1;
}

main();
