import { Worker } from 'node:worker_threads';
import { workerWithSemiSpace } from '../../src/kernel/database/engine-thread-heap.js';

/** A worker that allocates short-lived objects for a while and answers with its young generation's largest size (MB). */
const ALLOCATING = `
const v8 = require('node:v8');
const { parentPort } = require('node:worker_threads');
let kept = [];
let largest = 0;
for (let i = 0; i < 2_000_000; i++) {
  kept.push({ i, text: 'x' + i });
  if (kept.length > 20_000) kept = [];
  if (i % 10_000 === 0) largest = Math.max(largest, v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size);
}
parentPort.postMessage(largest / 1048576);`;

function youngGeneration(worker: Worker): Promise<number> {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

describe('workerWithSemiSpace', () => {
  test('the worker gets a small young generation; isolates created after it get the process\'s own again', async () => {
    const small = workerWithSemiSpace(() => new Worker(ALLOCATING, { eval: true }), 2);
    const smallSize = await youngGeneration(small);
    // Started after the small one was online: V8's flag must be the process's again.
    const plain = new Worker(ALLOCATING, { eval: true });
    const plainSize = await youngGeneration(plain);
    await Promise.all([small.terminate(), plain.terminate()]);
    expect(smallSize).toBeLessThanOrEqual(4); // two semi-spaces of 2 MB
    expect(plainSize).toBeGreaterThanOrEqual(16);
  }, 60_000);

  test('a worker that fails to start leaves the process\'s setting as it was', async () => {
    expect(() => workerWithSemiSpace(() => { throw new Error('no worker'); }, 2)).toThrow('no worker');
    const plain = new Worker(ALLOCATING, { eval: true });
    const plainSize = await youngGeneration(plain);
    await plain.terminate();
    expect(plainSize).toBeGreaterThanOrEqual(16);
    expect(() => workerWithSemiSpace(() => new Worker('', { eval: true }), 0)).toThrow(/positive whole number/);
  }, 60_000);
});
