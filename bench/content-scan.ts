/**
 * Micro benchmark of the content-safety scan (issue 36): MB/s per core of `scan` (and of scan + transform) with every
 * local detector on, over ordinary prose, over prose with a sensitive value every KB, and over 4 KB prompts.
 * The process holds credentials as a gateway does (holdCredentials), so the secret detector's search for them is counted.
 * One process, one core: `node dist/bench/content-scan.js [--seconds N] [--json]` (N: CPU seconds per case).
 */
import { randomBytes } from 'node:crypto';
import { type ContentPolicyDefinition } from '../events/index.js';
import { FindingCounts, PlaceholderKeys, RequestTokenVault, applyInputPolicy, compilePolicy, scan, transform } from '../modules/content-safety/index.js';
import { rememberSecret } from '../src/kernel/index.js';
import { ordinaryProse, proseWithValues } from '../test/fixtures/content-safety/corpus.js';

/** Every local detector on, as the issue's `pii` bench variant asks: mask or tokenize, custom patterns and deny terms included. */
export const EVERY_DETECTOR: ContentPolicyDefinition = {
  input: {
    email: 'tokenize', phone: 'tokenize', card: 'mask', iban: 'mask', national_id: 'mask', ip_address: 'mask', secret: 'mask', prompt_injection: 'mask',
    custom: [{ name: 'project-code', pattern: 'PRJ-[0-9]{6}', action: 'mask' }],
    deny_terms: { terms: ['project nightingale', 'codename bluebird', 'operation sandstone', 'internal only'], action: 'mask' },
  },
  output: {},
  tokenScope: 'request',
  unresolvedTokenPolicy: 'leave-masked',
  placeholderInstruction: false,
};

/**
 * MB/s per core is bytes over the CPU time this process spent (user + system), not over wall time: on a shared
 * machine the wall clock also counts the time other processes held the core. Both are reported.
 */
interface Measurement { name: string; bytes: number; iterations: number; cpuSeconds: number; wallSeconds: number; mbPerCpuSecond: number; mbPerWallSecond: number; findings: number }

/** What one run does: the scan alone, the scan and the transform, or the request path's whole input check (reading forms included). */
type Work = 'scan' | 'transform' | 'policy';

function measure(name: string, text: string, seconds: number, work: Work): Measurement {
  const compiled = compilePolicy(EVERY_DETECTOR).input;
  const keys = PlaceholderKeys.random();
  const bytes = Buffer.byteLength(text);
  let findings = 0;
  const once = (iteration: number) => {
    if (work === 'policy') {
      const counts = new FindingCounts();
      applyInputPolicy(text, { rules: compiled, vault: new RequestTokenVault(keys, 'bench', `r${iteration}`), counts });
      findings = counts.total;
      return;
    }
    const found = scan(text, compiled);
    findings = found.length;
    if (work === 'transform') transform(text, found, { direction: 'input', vault: new RequestTokenVault(keys, 'bench', `r${iteration}`) });
  };
  for (let i = 0; i < 5; i++) once(i); // warm up: compile the regexes, let the JIT settle
  let iterations = 0;
  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  const budget = seconds * 1e6;
  let cpu = 0;
  do {
    once(iterations++);
    const used = process.cpuUsage(cpuStarted);
    cpu = used.user + used.system;
  } while (cpu < budget);
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuSeconds = cpu / 1e6;
  const megabytes = (bytes * iterations) / 1e6;
  return { name, bytes, iterations, cpuSeconds, wallSeconds, mbPerCpuSecond: megabytes / cpuSeconds, mbPerWallSecond: megabytes / wallSeconds, findings };
}

/**
 * What a gateway holds while it scans: six provider keys, an admin token and a database password (random, of the
 * providers' shapes). The secret detector looks for every form of each (raw, URL, JSON, hex, base64 at three alignments).
 */
function holdCredentials(): void {
  const random = (length: number) => randomBytes(length).toString('base64url').slice(0, length);
  for (const prefix of ['sk-proj-', 'sk-ant-api03-', 'AIza', 'gsk_', 'hf_', 'sk-']) rememberSecret(`${prefix}${random(48)}`);
  rememberSecret(`sy-admin-${random(40)}`);
  rememberSecret(random(24));
}

/**
 * The text as a request's body gives it to the scan: out of JSON.parse, one flat string. The corpus builds its texts by
 * concatenation, and V8 reads a concatenated string's characters through its pieces (a character loop over one ran
 * at half the speed).
 */
function asParsed(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

function main(): void {
  holdCredentials();
  const args = process.argv.slice(2);
  const secondsAt = args.indexOf('--seconds');
  const seconds = secondsAt >= 0 ? Number(args[secondsAt + 1]) : 2;
  const json = args.includes('--json');
  const prose = asParsed(ordinaryProse(1_000_000, 7));
  const mixed = asParsed(proseWithValues(1_000_000, 1_000, 11).text);
  const prompt = asParsed(proseWithValues(4_096, 1_000, 13).text.slice(0, 4_096));
  const results = [
    measure('scan, ordinary prose (1 MB)', prose, seconds, 'scan'),
    measure('scan, prose with a value per KB (1 MB)', mixed, seconds, 'scan'),
    measure('scan + transform, prose with a value per KB (1 MB)', mixed, seconds, 'transform'),
    measure('scan + transform, 4 KB prompt', prompt, seconds, 'transform'),
    // The request path's input check: an ASCII prompt has no reading form (one test for a non-ASCII character);
    // one whose Latin "a" and "o" are Cyrillic lookalikes has one, scanned too — the most it costs.
    measure('input check, 4 KB prompt', prompt, seconds, 'policy'),
    measure('input check, 4 KB prompt with Cyrillic lookalikes', asParsed(prompt.replace(/a/g, '\u0430').replace(/o/g, '\u043e')), seconds, 'policy'),
  ];
  if (json) {
    process.stdout.write(`${JSON.stringify({ node: process.version, results }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`content-safety scan, every local detector on, one core (node ${process.version})\n`);
  for (const result of results) {
    process.stdout.write(`  ${result.name.padEnd(52)} ${result.mbPerCpuSecond.toFixed(1).padStart(7)} MB/s per core (${result.mbPerWallSecond.toFixed(1)} MB/s wall; ${result.findings} findings, ${result.iterations} runs)\n`);
  }
}

if (process.argv[1]?.endsWith("content-scan.js")) main();
