import { type ContentPolicyDefinition, type ContentPolicyEvent, contentPolicyFold, type ContentPolicyState } from '../../../events/index.js';
import { assertNever, type Decider, DEFINITION_ID, DomainError, sameJson } from '../../../src/kernel/index.js';
import { contentPolicyProblems, normalizeContentPolicy } from '../../content-safety/index.js';

export type ContentPolicyCommand =
  /** Defines the policy, or a new version of it when the definition differs (a retired one comes back as a new version). */
  | { type: 'DefineContentPolicy'; policyId: string; definition: ContentPolicyDefinition }
  | { type: 'RetireContentPolicy'; policyId: string };

/**
 * A content policy (DESIGN §13): versioned like an alias, 1, 2, … per definition change. The definition
 * arrives validated and normalised by the readers at the boundary (YAML, admin API: content-policy-definition.ts);
 * the rules that need other aggregates (attached policies cannot be retired, attachments must name a live
 * policy) are the publication guard's (src/publication-guard.ts).
 */
export const contentPolicyDecider: Decider<ContentPolicyCommand, ContentPolicyEvent, ContentPolicyState> = {
  initialState: contentPolicyFold.initialState,
  evolve: contentPolicyFold.evolve,

  decide(command, state) {
    const id = command.policyId;
    switch (command.type) {
      case 'DefineContentPolicy': {
        if (!DEFINITION_ID.test(id)) throw new DomainError('invalid_content_policy', 'content policy ids use letters, digits, ".", "_" and "-" (at most 64)', 422);
        // The readers at the boundary report these with their paths; here they guard every other sender.
        const problems = contentPolicyProblems(command.definition, 'definition');
        if (problems.length) throw new DomainError('invalid_content_policy', problems.join('; '), 422);
        // Every event holds the whole definition, defaults filled (a sender that rebuilt it from its fields may have
        // left out an empty direction): what the engine compiles, and what two versions are compared by.
        const definition = normalizeContentPolicy(command.definition as unknown as Record<string, unknown>);
        if (state.status === 'live' && sameJson(state.definition, definition)) return [];
        if (state.status === 'live') {
          return [{ type: 'ContentPolicyUpdated', data: { policyId: id, version: state.version + 1, definition } }];
        }
        // A retired policy defined again starts a new version: a version number never names two definitions.
        const version = state.status === 'retired' ? state.version + 1 : 1;
        return [{ type: 'ContentPolicyDefined', data: { policyId: id, version, definition } }];
      }
      case 'RetireContentPolicy':
        if (state.status === 'absent') throw new DomainError('content_policy_not_found', `Content policy ${id} does not exist`, 404);
        if (state.status === 'retired') throw new DomainError('content_policy_already_retired', `Content policy ${id} is already retired`);
        return [{ type: 'ContentPolicyRetired', data: { policyId: id, version: state.version } }];
      default:
        return assertNever(command);
    }
  },
};
