// Jest's order (failed suites first, then by the last run's duration, then by file size), except that the
// longest suites (scripts/test-groups.mjs) always start first: on a fresh machine jest has no timings and a
// long suite picked last would leave the run waiting on one worker.
import Sequencer from '@jest/test-sequencer';
import { longSuiteRank } from './test-groups.mjs';

export default class SuiteSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const long = sorted.filter((test) => longSuiteRank(test.path) >= 0).sort((a, b) => longSuiteRank(a.path) - longSuiteRank(b.path));
    return [...long, ...sorted.filter((test) => longSuiteRank(test.path) < 0)];
  }
}
