import { assertNever, type StateFold } from '../src/kernel/index.js';
import type { ContentPolicyDefinition, ContentPolicyEvent } from './content-policy-events.js';

/**
 * A content policy as its events leave it: what its decider decides on and the routing snapshot folds.
 * A retired policy keeps its last version and definition (requests admitted under it still name them).
 */
export type ContentPolicyState =
  | { status: 'absent' }
  | { status: 'live' | 'retired'; policyId: string; version: number; definition: ContentPolicyDefinition };

export const contentPolicyFold: StateFold<ContentPolicyEvent, ContentPolicyState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'ContentPolicyDefined':
      case 'ContentPolicyUpdated':
        return { status: 'live', policyId: event.data.policyId, version: event.data.version, definition: event.data.definition };
      case 'ContentPolicyRetired':
        return state.status === 'absent' ? state : { ...state, status: 'retired', version: event.data.version };
      default:
        return assertNever(event);
    }
  },
};
