import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_FLAGS, SERVING_ENV, servingEnvFor } from '../../src/cli/serving-flags.js';

/** The V8 flags of a Switchyard process: `npm start` passes the same ones the bench's gateways get. */
describe('Node flags of Switchyard processes', () => {
  const root = join(process.cwd());
  test('npm start passes them', () => {
    const start: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start;
    // Each variable of the serving environment, unless the operator set it already.
    const env = Object.entries(SERVING_ENV).map(([name, value]) => `${name}=\${${name}:-${value}}`).join(' ');
    expect(start).toBe(`${env} node ${NODE_FLAGS.join(' ')} bin/switchyard.js serve`);
  });
  test("npm start's environment gives way to the operator's own value", () => {
    const start: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start;
    const assignments = start.slice(0, start.indexOf(' node '));
    const script = `${assignments} sh -c 'echo "$MALLOC_ARENA_MAX $MALLOC_MMAP_THRESHOLD_"'`;
    const run = (env: Record<string, string>) => spawnSync('sh', ['-c', script], { encoding: 'utf8', env: { PATH: process.env.PATH!, ...env } }).stdout.trim();
    expect(run({})).toBe('2 131072');
    expect(run({ MALLOC_ARENA_MAX: '4' })).toBe('4 131072');
    expect(run({ MALLOC_MMAP_THRESHOLD_: '65536' })).toBe('2 65536');
  });
  test('workers and the bench get the serving environment where it is not set', () => {
    expect(servingEnvFor({})).toEqual(SERVING_ENV);
    expect(servingEnvFor({ MALLOC_ARENA_MAX: '8' })).toEqual({ MALLOC_MMAP_THRESHOLD_: '131072' });
    expect(servingEnvFor({ MALLOC_ARENA_MAX: '8', MALLOC_MMAP_THRESHOLD_: '0' })).toEqual({});
  });
  test('the flags are ones this Node accepts on its command line', () => {
    const run = spawnSync(process.execPath, [...NODE_FLAGS, '-e', 'process.exit(0)'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
