/**
 * The mock provider in a process of its own, so that its CPU is neither the generator's nor a target's.
 * The runner asks it how many calls it has answered (to prove each target really reached it) and
 * changes its timing for the slow-stream mode.
 */
import type { MockBehaviour } from '../../modules/providers/mock/mock-behaviour.js';
import { MockProviderServer } from '../../modules/providers/mock/mock-provider-server.js';
import { announce, answerRequests } from './ipc.js';

const mock = new MockProviderServer();
const url = await mock.listen(0);
answerRequests({
  // Sequence numbers are never reused, so the newest record's tells how many calls arrived so far.
  calls: () => mock.requests().at(-1)?.seq ?? 0,
  behave: (behaviour: Partial<MockBehaviour>) => {
    mock.setDefaults(behaviour);
    return true;
  },
});
process.on('SIGTERM', () => void mock.close().then(() => process.exit(0)));
announce('ready', { url });
