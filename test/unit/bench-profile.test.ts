import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePlan } from '../../bench/options.js';
import { moduleOf, summarize, summarizeHeap } from '../../bench/profile/summarize.js';
import { between, selfTimeBetween, windowsBetween } from '../../bench/profile/between.js';

describe('bench: gateway CPU profiles', () => {
  it('--gateway-profile loads the profiler into the gateway and creates the directory it writes to', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'bench-profile-')), 'profiles');
    try {
      const plan = parsePlan(['--targets', 'switchyard', '--gateway-profile', dir, '--gateway-env', 'SWITCHYARD_POLL_MS=500'], {});
      expect(plan.gatewayEnv).toEqual({
        SWITCHYARD_POLL_MS: '500',
        NODE_OPTIONS: expect.stringMatching(/^--import=file:\/\/.*\/dist\/bench\/profile\/gateway-profiler\.js$/),
        BENCH_PROFILE_DIR: dir,
      });
      expect(existsSync(dir)).toBe(true);
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true });
    }
  });

  it('names a frame by its package, Switchyard file or V8', () => {
    expect(moduleOf('file:///work/main/node_modules/@nestjs/core/router/x.js')).toBe('npm:@nestjs/core');
    expect(moduleOf('file:///work/wt/perf/node_modules/pg/lib/client.js')).toBe('npm:pg');
    expect(moduleOf('file:///repo/dist/modules/canonical/tokenizer.js')).toBe('sy:modules/canonical/tokenizer.js');
    expect(moduleOf('node:events')).toBe('node:events');
    expect(moduleOf('')).toBe('(vm)');
  });

  it('sums self and inclusive time per function, and per request', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 4] },
        { id: 2, callFrame: frame('handle', 'file:///r/dist/modules/a.js'), children: [3] },
        { id: 3, callFrame: frame('parse', 'file:///r/node_modules/pg/x.js') },
        { id: 4, callFrame: frame('(idle)', '') },
      ],
      samples: [2, 3, 3, 3, 4],
      timeDeltas: [100, 100, 100, 100, 600],
      requests: 2,
    };
    const text = summarize(profile, 10);
    expect(text).toContain('0.0 s sampled, 0.0 s not idle, 2 /v1/ requests, 200 µs not idle per request');
    expect(text).toMatch(/30\.00%\s+150\.0 µs\/req {2}npm:pg\n/);
    expect(text).toMatch(/40\.00%\s+200\.0 µs\/req {2}handle sy:modules\/a\.js:1/);
  });

  it.each([
    ['--gateway-heap-profile', 'heap', '--gateway-profile'],
    ['--gateway-survivor-profile', 'survivors', '--gateway-heap-profile'],
  ])('%s loads the same module as a heap profiler (kind %s), and not together with %s', (option, kind, other) => {
    const dir = join(mkdtempSync(join(tmpdir(), 'bench-profile-')), kind);
    try {
      const plan = parsePlan(['--targets', 'switchyard', option, dir], {});
      expect(plan.gatewayEnv).toEqual({
        NODE_OPTIONS: expect.stringMatching(/gateway-profiler\.js$/),
        BENCH_PROFILE_DIR: dir,
        BENCH_PROFILE_KIND: kind,
      });
      expect(() => parsePlan([other, dir, option, dir], {})).toThrow(/one profiler at a time/);
    } finally {
      rmSync(join(dir, '..'), { recursive: true, force: true });
    }
  });

  it('sums the bytes each function of a heap profile allocated, self and inclusive, per request', () => {
    const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
    const profile = {
      head: {
        id: 1, callFrame: frame('(root)', ''), selfSize: 0, children: [
          { id: 2, callFrame: frame('handle', 'file:///r/dist/modules/a.js'), selfSize: 1024, children: [
            { id: 3, callFrame: frame('parseRow', 'file:///r/node_modules/pg/x.js'), selfSize: 3072, children: [] },
          ] },
        ],
      },
      requests: 2,
    };
    const text = summarizeHeap(profile, 10);
    expect(text).toContain('0.0 MB allocated (sampled), 2 /v1/ requests, 2.0 kB per request');
    expect(text).toMatch(/75\.00%\s+1\.50 kB\/req {2}npm:pg\n/);
    expect(text).toMatch(/inclusive allocation of Switchyard's functions\n100\.00%\s+2\.00 kB\/req {2}handle sy:modules\/a\.js:1/);
  });
});

describe('bench: a CPU profile between two marks of the phase probe', () => {
  const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });
  // Samples every 100 µs from hrtime 1,000,000 µs; the marks' clock is hrtime − 900,000 µs (so 100 ms at the first sample).
  const profile = {
    startTime: 1_000_000,
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 3, 4] },
      { id: 2, callFrame: frame('translate', 'file:///r/dist/modules/p.js') },
      { id: 3, callFrame: frame('(idle)', '') },
      { id: 4, callFrame: frame('append', 'file:///r/dist/src/a.js') },
    ],
    samples: [4, 2, 3, 2, 4, 4, 2, 3],
    timeDeltas: [0, 100, 100, 100, 100, 100, 100, 100],
  };
  const samples = {
    pid: 1, pages: [], pauses: [], hrOffsetUs: 900_000,
    requests: [
      { start: 99, upstreamHeaders: 100.1, firstWrite: 100.35 }, // samples at 100.1, 100.2, 100.3
      { start: 100.4, upstreamHeaders: 100.55, firstWrite: 100.65 }, // the sample at 100.6
      { start: 100.5, upstreamHeaders: 100.6, firstWrite: 100.62 }, // overlaps the one before: counted once
      { start: 101, upstreamHeaders: 101 }, // never wrote: left out
    ],
  };

  it('keeps the requests that reached both marks, shorter than --under', () => {
    expect(windowsBetween(samples.requests, 'upstreamHeaders', 'firstWrite').map(([a, b]) => [a, Number((b - a).toFixed(2))])).toEqual([[100.1, 0.25], [100.55, 0.1], [100.6, 0.02]]);
    expect(windowsBetween(samples.requests, 'upstreamHeaders', 'firstWrite', 0.2)).toHaveLength(2);
  });

  it('counts each sample taken inside a window once, and nothing outside them', () => {
    const windows = windowsBetween(samples.requests, 'upstreamHeaders', 'firstWrite');
    const self = selfTimeBetween(profile, samples.hrOffsetUs, windows);
    // Inside: 100.1 (translate), 100.2 (idle), 100.3 (translate), 100.6 (translate); outside: 100.0, 100.4, 100.5 (append), 100.7.
    expect(Object.fromEntries(self)).toEqual({ 2: 300, 3: 100 });
  });

  it('prints the tables per request of the step', () => {
    const text = between(samples, profile, 'upstreamHeaders', 'firstWrite');
    expect(text).toMatch(/^upstreamHeaders → firstWrite: 3 requests/);
    expect(text).toContain('translate sy:modules/p.js:1');
    expect(text).not.toContain('append');
    expect(() => between({ ...samples, hrOffsetUs: undefined }, profile, 'upstreamHeaders', 'firstWrite')).toThrow(/hrOffsetUs/);
  });
});
