#!/usr/bin/env node
/**
 * Runs the Open Responses compliance suite (github.com/openresponses/openresponses,
 * src/lib/compliance-tests.ts, Apache-2.0) against Switchyard's `/v1/responses`, once per provider
 * format: a gateway is started in-process with the conformance configuration (an alias per provider
 * format — openai-compatible, azure-openai, anthropic, gemini, bedrock — all on the built-in mock).
 *
 * The suite is not published on npm and is not vendored here: point OPEN_RESPONSES_DIR (or the first
 * argument) at a checkout of that repository. Its TypeScript (the tests, the SSE parser and the
 * generated zod schemas) is transpiled into a scratch directory with the project's own TypeScript
 * and run on Node; the suite pins zod 3, whose API zod 4 serves at `zod/v3`.
 *
 *   npm run build && OPEN_RESPONSES_DIR=../openresponses node scripts/responses-compliance.mjs [--filter id,id] [--verbose]
 *
 * Prints one line per test and alias, the failures' reasons, and ends with `N passed, N failed`.
 * Exit code 0 when every test passed.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const ts = require('typescript');
const root = resolve(dirname(new URL(import.meta.url).pathname), '..');

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
};
const suiteDir = resolve(args.find((a, i) => !a.startsWith('--') && !['--filter'].includes(args[i - 1])) ?? process.env.OPEN_RESPONSES_DIR ?? '');
const filter = option('--filter')?.split(',').map((s) => s.trim());
const verbose = args.includes('--verbose');
if (!process.env.OPEN_RESPONSES_DIR && !args.some((a) => !a.startsWith('--'))) {
  console.error('Set OPEN_RESPONSES_DIR to a checkout of github.com/openresponses/openresponses (or pass it as the first argument).');
  process.exit(2);
}

/** The suite's sources, transpiled to ESM with import specifiers Node resolves. */
function transpileSuite(from) {
  const out = mkdtempSync(join(tmpdir(), 'open-responses-'));
  const zod = pathToFileURL(require.resolve('zod/v3')).href;
  const files = [
    'src/lib/compliance-tests.ts',
    'src/lib/sse-parser.ts',
    ...readdirSync(join(from, 'src/generated/kubb/zod')).filter((f) => f.endsWith('.ts')).map((f) => `src/generated/kubb/zod/${f}`),
  ];
  for (const file of files) {
    const source = readFileSync(join(from, file), 'utf8');
    const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } });
    const rewritten = outputText.replace(/(from\s+|import\s*\(\s*)(["'])([^"']+)\2/g, (match, lead, quote, spec) => {
      if (spec === 'zod') return `${lead}${quote}${zod}${quote}`;
      if (!spec.startsWith('.')) return match;
      return `${lead}${quote}${spec.replace(/\.ts$/, '')}.js${quote}`;
    });
    const target = join(out, file.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, rewritten);
  }
  return out;
}

const scratch = transpileSuite(suiteDir);
const { runAllTests, testTemplates } = await import(pathToFileURL(join(scratch, 'src/lib/compliance-tests.js')).href);
const { startTestGateway } = await import(pathToFileURL(join(root, 'dist/test/support/gateway-harness.js')).href);
const { BEDROCK_CREDENTIALS, BEDROCK_CREDENTIALS_ENV, PROVIDER_FORMATS, conformanceYaml } = await import(
  pathToFileURL(join(root, 'dist/test/support/conformance.js')).href
);

process.env[BEDROCK_CREDENTIALS_ENV] = BEDROCK_CREDENTIALS;
const gateway = await startTestGateway({ yaml: conformanceYaml });
const templates = filter ? testTemplates.filter((t) => filter.includes(t.id)) : testTemplates;
let passed = 0;
let failed = 0;
let skipped = 0;
try {
  console.log(`Open Responses compliance suite (${relative(process.cwd(), suiteDir) || '.'}): ${templates.length} tests × ${PROVIDER_FORMATS.length} provider formats`);
  for (const provider of PROVIDER_FORMATS) {
    const config = { baseUrl: `${gateway.url}/v1`, apiKey: gateway.key, authHeaderName: 'Authorization', useBearerPrefix: true, model: provider.alias, runtime: 'server' };
    const results = await runAllTests(config, () => undefined, templates);
    for (const result of results) {
      if (result.status === 'passed') passed++;
      else if (result.status === 'skipped') skipped++;
      else failed++;
      const mark = result.status === 'passed' ? 'ok  ' : result.status === 'skipped' ? 'skip' : 'FAIL';
      console.log(`${mark} ${provider.type.padEnd(17)} ${result.id}`);
      if (result.status === 'passed') continue;
      for (const error of (result.errors ?? []).slice(0, verbose ? 50 : 3)) console.log(`       ${String(error).slice(0, verbose ? 2000 : 240)}`);
      // The suite renders an error body it parsed as "[object Object]": show the body itself.
      if (result.response !== undefined && typeof result.response === 'object') console.log(`       response: ${JSON.stringify(result.response).slice(0, verbose ? 4000 : 240)}`);
    }
  }
} finally {
  await gateway.close();
  rmSync(scratch, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed === 0 ? 0 : 1);
