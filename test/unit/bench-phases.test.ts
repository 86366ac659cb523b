import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parsePlan } from '../../bench/options.js';
import { phaseProbeModule } from '../../bench/paths.js';
import type { PhaseRecord, PhaseSamples } from '../../bench/profile/phase-samples.js';
import { render, stretches } from '../../bench/profile/phases.js';

describe('bench: request phases', () => {
  it('--gateway-phases loads the probe beside a profiler, into a directory it creates', () => {
    const root = mkdtempSync(join(tmpdir(), 'bench-phases-'));
    try {
      const plan = parsePlan(['--targets', 'switchyard', '--gateway-profile', join(root, 'cpu'), '--gateway-phases', join(root, 'phases')], {});
      expect(plan.gatewayEnv.NODE_OPTIONS).toMatch(/^--import=\S*gateway-profiler\.js --import=\S*phase-probe\.js$/);
      expect(plan.gatewayEnv.BENCH_PHASES_DIR).toBe(join(root, 'phases'));
      expect(readdirSync(root).sort()).toEqual(['cpu', 'phases']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('records each /v1/ request of a real server, and nothing of another path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-phases-'));
    try {
      // A server of its own answering a /v1/ request with two writes and a /readyz: the probe must load
      // (every method it wraps still exists) and see the first write and the finish.
      const script = `
        const http = require('node:http');
        const server = http.createServer((req, res) => { res.write('a'); res.end('b'); });
        server.listen(0, '127.0.0.1', async () => {
          const base = 'http://127.0.0.1:' + server.address().port;
          await (await fetch(base + '/v1/chat/completions', { method: 'POST', body: '{}' })).text();
          await (await fetch(base + '/readyz')).text();
          server.close();
        });`;
      execFileSync(process.execPath, [`--import=${pathToFileURL(phaseProbeModule).href}`, '-e', script], { env: { ...process.env, BENCH_PHASES_DIR: dir }, timeout: 20_000 });
      const [file] = readdirSync(dir);
      const samples = JSON.parse(readFileSync(join(dir, file), 'utf8')) as PhaseSamples;
      expect(samples.requests).toHaveLength(1);
      const [record] = samples.requests;
      expect(record.firstWrite).toBeGreaterThanOrEqual(record.start);
      expect(record.finish).toBeGreaterThanOrEqual(record.firstWrite!);
      expect(record.dispatch).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('splits load into stretches, times each step, and compares commits with and without a page running', () => {
    const request = (start: number, commitMs: number): PhaseRecord => ({
      start, handler: start + 0.1, admitted: start + 0.2, dispatch: start + 0.3, upstreamHeaders: start + 0.6, upstreamEnd: start + 0.65,
      append: start + 0.7, committed: start + 0.7 + commitMs, finish: start + 0.8 + commitMs,
    });
    // 300 requests 1 ms apart, a page over the commits of the last hundred (3 ms instead of 1), then a
    // second stretch after a pause, too short to report.
    const first = Array.from({ length: 300 }, (_, i) => request(i, i >= 200 ? 3 : 1));
    const second = Array.from({ length: 50 }, (_, i) => request(2_000 + i, 1));
    const samples: PhaseSamples = { pid: 1, requests: [...second, ...first], pages: [[200, 105, 'cost-ledger', 40]], pauses: [[10, 2]] };
    expect(stretches(samples.requests).map((run) => run.length)).toEqual([300]);
    const text = render(samples);
    expect(text).toContain('**300 requests at');
    expect(text).toContain('| handler → admitted (parse, limits, cache, plan) | 300 | 0.100 / 0.100 / 0.100 |');
    expect(text).toMatch(/\| append → committed, a projection page running meanwhile \| 10\d \| 3\.000 \/ 3\.000 \/ 3\.000 \|/);
    expect(text).toMatch(/\| append → committed, no page running \| 19\d \| 1\.000 \/ 1\.000 \/ 1\.000 \|/);
    expect(text).toContain('pages of cost-ledger: 1, 40 events each on average');
    expect(text).toContain('collector pauses: 1, 2.0 ms in all, longest 2.00 ms');
    expect(text).not.toContain('first write');
  });
});
