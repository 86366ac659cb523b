import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { REPO } from './deploy-facts.js';

/**
 * What the console's browser suites share: Debian's Chromium driven by playwright-core, axe-core injected into
 * the page, screenshots kept as test artifacts (SWITCHYARD_CONSOLE_ARTIFACTS, default test-artifacts/console),
 * and the console built from its sources when they are newer than dist/console (as `npm test` does).
 */

export const CHROMIUM = process.env.SWITCHYARD_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = process.env.SWITCHYARD_CONSOLE_ARTIFACTS ?? join(REPO, 'test-artifacts', 'console');
/** Set to 1 to refresh the committed screenshots in docs/images/console (the pages docs/console.md shows) from this run. */
export const REFRESHING_DOCS_IMAGES = process.env.SWITCHYARD_CONSOLE_DOCS_IMAGES === '1';
const DOCS_IMAGES = join(REPO, 'docs', 'images', 'console');
const DOCS_PAGES = new Set(['sign-in', 'overview', 'catalog-alias-dry-run', 'access-new-key', 'requests', 'request', 'spend', 'audit', 'playground']);

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function ensureConsoleBuilt(): Promise<void> {
  const { ensureConsoleBuild } = (await import(pathToFileURL(join(REPO, 'scripts', 'ensure-build.mjs')).href)) as {
    ensureConsoleBuild: (root: string, options: { quiet: boolean }) => boolean;
  };
  ensureConsoleBuild(REPO, { quiet: true });
}

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs the suites as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface AxeViolation { id: string; impact: string | null; help: string; targets: string[] }

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.x A and AA rules). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // In-page code as text: this project compiles without the DOM's types. axe is injected once per document,
  // evaluated through the DevTools protocol: a <script> tag (addScriptTag) is inline code, which the console's
  // CSP rightly refuses, and bypassing the CSP for the suite would hide an inline script of the console's own.
  if (!(await page.evaluate("'axe' in window"))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<AxeViolation[]>(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })
    .then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) })))`);
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A full-page screenshot under ARTIFACTS (and the docs' pages in docs/images/console when asked to refresh those). */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  if (REFRESHING_DOCS_IMAGES && DOCS_PAGES.has(name)) {
    // The docs show what a 1360×900 window shows (a whole long page would weigh a megabyte in the repository).
    mkdirSync(DOCS_IMAGES, { recursive: true });
    await page.screenshot({ path: join(DOCS_IMAGES, `${name}.png`), fullPage: false });
  }
  return path;
}
