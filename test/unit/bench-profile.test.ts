import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePlan } from '../../bench/options.js';
import { moduleOf, summarize, summarizeHeap } from '../../bench/profile/summarize.js';

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
