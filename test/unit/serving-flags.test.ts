import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_FLAGS } from '../../src/cli/serving-flags.js';

/** The V8 flags of a Switchyard process: `npm start` passes the same ones the bench's gateways get. */
describe('Node flags of Switchyard processes', () => {
  const root = join(process.cwd());
  test('npm start passes them', () => {
    const start: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start;
    expect(start).toBe(`node ${NODE_FLAGS.join(' ')} bin/switchyard.js serve`);
  });
  test('the flags are ones this Node accepts on its command line', () => {
    const run = spawnSync(process.execPath, [...NODE_FLAGS, '-e', 'process.exit(0)'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });
});
