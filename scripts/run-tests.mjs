// `npm test`: jest over the compiled suites in three groups — every suite but the quiet and waiting ones in
// parallel workers, with the waiting suites (scripts/test-groups.mjs: mostly sleeping on windows, outages and
// cooldowns) one at a time in a lane beside them, then the quiet suites one at a time on an otherwise idle
// machine — and one summary at the end. Suites that need a service whose URL is unset skip, and the run says so once
// per service instead of once per suite. Any argument other than the ones below goes to a single jest run
// as is (`npm test -- dist/test/unit/pricing.test.js`, `npm test -- -t budget`).
//
//   --maxWorkers=N       workers of the parallel group (default: 2)
//   --json               write the merged results as jest's JSON (to --outputFile=F, or stdout)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isQuietSuite, isWaitingSuite, LONG_SUITES, QUIET_SUITES, WAITING_SUITES } from './test-groups.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const jestBin = join(root, 'node_modules', 'jest', 'bin', 'jest.js');

/** The services suites may need, by the variable that names them. */
const SERVICES = [
  { variable: 'DATABASE_URL', name: 'PostgreSQL', example: 'postgres://postgres@127.0.0.1:5432/postgres' },
  { variable: 'REDIS_URL', name: 'Redis', example: 'redis://127.0.0.1:6379' },
  { variable: 'CLICKHOUSE_URL', name: 'ClickHouse', example: 'http://127.0.0.1:8123' },
];

function parseArguments(args) {
  const options = { maxWorkers: 2, json: false, outputFile: null, passThrough: [] };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => inline ?? args[++index];
    if (flag === '--maxWorkers' || flag === '-w') {
      const workers = Number(value());
      if (!Number.isInteger(workers) || workers < 1) fail(`--maxWorkers must be a whole number of at least 1, got ${arg}`);
      options.maxWorkers = workers;
    } else if (flag === '--json') options.json = true;
    else if (flag === '--outputFile') options.outputFile = value();
    else options.passThrough.push(arg);
  }
  return options;
}

function fail(message) {
  process.stderr.write(`npm test: ${message}\n`);
  process.exit(2);
}

/** Runs jest with `args`; resolves with its exit code. Output goes straight to the terminal. */
function jest(args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--experimental-vm-modules', '--no-warnings', jestBin, ...args], { cwd: root, env, stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** The compiled suites jest would run, absolute paths. */
function listSuites(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--experimental-vm-modules', '--no-warnings', jestBin, '--listTests', '--json'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`jest --listTests exited with ${code}`))));
  });
}

/** Jest's JSON results of several runs as one (the shape CI and tools read). */
function merge(results) {
  const sum = (key) => results.reduce((total, result) => total + (result[key] ?? 0), 0);
  return {
    ...results[0],
    success: results.every((result) => result.success),
    startTime: Math.min(...results.map((result) => result.startTime)),
    numTotalTestSuites: sum('numTotalTestSuites'),
    numPassedTestSuites: sum('numPassedTestSuites'),
    numFailedTestSuites: sum('numFailedTestSuites'),
    numPendingTestSuites: sum('numPendingTestSuites'),
    numRuntimeErrorTestSuites: sum('numRuntimeErrorTestSuites'),
    numTotalTests: sum('numTotalTests'),
    numPassedTests: sum('numPassedTests'),
    numFailedTests: sum('numFailedTests'),
    numPendingTests: sum('numPendingTests'),
    numTodoTests: sum('numTodoTests'),
    testResults: results.flatMap((result) => result.testResults),
  };
}

function minutes(ms) {
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/** Services whose suites skipped, from the lines requireService (test/support/services.ts) appended. */
function skippedServices(skipsFile) {
  if (!existsSync(skipsFile)) return new Map();
  const suites = new Map();
  for (const line of readFileSync(skipsFile, 'utf8').split('\n').filter(Boolean)) {
    const [variable, suite] = line.split('\t');
    if (!suites.has(variable)) suites.set(variable, new Set());
    suites.get(variable).add(suite);
  }
  return suites;
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const scratch = mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const skipsFile = join(scratch, 'skips.tsv');
  const env = { ...process.env, SWITCHYARD_TEST_SKIPS: skipsFile };
  const started = Date.now();
  try {
    if (process.env.CI !== 'true') {
      for (const service of SERVICES.filter((candidate) => !process.env[candidate.variable])) {
        process.stderr.write(`[skip] ${service.variable} is not set: the suites that need ${service.name} skip (e.g. ${service.variable}=${service.example}; docs/testing.md)\n`);
      }
    }
    if (options.passThrough.length > 0) {
      const args = [...options.passThrough, `--maxWorkers=${options.maxWorkers}`];
      if (options.json) args.push('--json', ...(options.outputFile ? [`--outputFile=${options.outputFile}`] : []));
      process.exitCode = await jest(args, env);
      return;
    }

    const suites = await listSuites(env);
    const quiet = suites.filter(isQuietSuite);
    const named = (suite) => suites.some((path) => path.replaceAll('\\', '/').endsWith(`/test/${suite}.test.js`));
    const missing = [...QUIET_SUITES, ...LONG_SUITES, ...WAITING_SUITES].filter((suite) => !named(suite));
    if (missing.length > 0) fail(`scripts/test-groups.mjs names suites that do not exist: ${missing.join(', ')}`);
    const waiting = suites.filter(isWaitingSuite);
    const parallel = suites.filter((path) => !isQuietSuite(path) && !isWaitingSuite(path));

    // Stages run one after the other; the groups of a stage at the same time (the waiting lane beside the parallel group).
    const stages = [
      [
        { label: `${plural(parallel.length, 'suite')} in ${plural(options.maxWorkers, 'worker')}`, args: [`--maxWorkers=${options.maxWorkers}`, '--testPathIgnorePatterns', ...[...quiet, ...waiting].map(escape)] },
        ...(waiting.length ? [{ label: `beside them ${plural(waiting.length, 'waiting suite')} one at a time`, args: ['--maxWorkers=1', '--runTestsByPath', ...waiting] }] : []),
      ],
      [{ label: `${plural(quiet.length, 'quiet suite')} one at a time`, args: ['--maxWorkers=1', '--runTestsByPath', ...quiet] }],
    ];
    const groups = stages.flat();
    const results = [];
    let code = 0;
    let index = 0;
    for (const stage of stages) {
      const runs = stage.map((group) => {
        const outputFile = join(scratch, `group-${index++}.json`);
        process.stderr.write(`\n[npm test] ${group.label}\n`);
        return jest([...group.args, '--json', `--outputFile=${outputFile}`], env).then((exit) => ({ group, exit, outputFile }));
      });
      for (const { group, exit, outputFile } of await Promise.all(runs)) {
        code = Math.max(code, exit);
        if (!existsSync(outputFile)) fail(`jest wrote no results for "${group.label}" (exit ${exit})`);
        results.push(JSON.parse(readFileSync(outputFile, 'utf8')));
      }
    }

    const merged = merge(results);
    if (options.json) {
      if (options.outputFile) writeFileSync(options.outputFile, JSON.stringify(merged));
      else process.stdout.write(`${JSON.stringify(merged)}\n`);
    }
    const failed = merged.numFailedTests + merged.numRuntimeErrorTestSuites;
    const lines = [
      '',
      `[npm test] ${merged.numPassedTests} passed, ${failed} failed, ${merged.numPendingTests} skipped — ${merged.numTotalTestSuites} suites (${groups.map((group) => group.label).join(', then ')}) in ${minutes(Date.now() - started)}`,
    ];
    for (const [variable, skipped] of skippedServices(skipsFile)) {
      const service = SERVICES.find((candidate) => candidate.variable === variable);
      lines.push(`[npm test] ${variable} was not set: ${plural(skipped.size, 'suite')} skipped what needs ${service?.name ?? variable}`);
    }
    for (const suite of merged.testResults.filter((result) => result.status === 'failed')) {
      lines.push(`[npm test] FAILED ${suite.name.slice(root.length + 1)}${suite.message && !suite.assertionResults?.length ? ' (did not run: see above)' : ''}`);
    }
    process.stderr.write(`${lines.join('\n')}\n`);
    process.exitCode = code !== 0 || failed > 0 ? 1 : 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** A path as a jest path pattern (a regular expression). */
function escape(path) {
  return path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

await main();
