import { assertNever, type StateFold } from '../src/kernel/index.js';
import type { AliasEvent, AliasPolicy, AliasRoute, AliasVisibility, RoutingStrategy } from './alias-events.js';

/** What a publication of an alias says: AliasPublished's data without the alias's name and version. */
export interface AliasDefinition {
  strategy: RoutingStrategy;
  routes: AliasRoute[];
  policy: AliasPolicy;
  visibility: AliasVisibility;
}

/** An alias as its events leave it: what the catalog decides on and the routing snapshot folds. */
export type AliasState =
  | { status: 'absent' }
  | { status: 'published' | 'retired'; alias: string; version: number; definition: AliasDefinition };

export const aliasFold: StateFold<AliasEvent, AliasState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'AliasPublished': {
        const { alias, version, ...definition } = event.data;
        return { status: 'published', alias, version, definition };
      }
      case 'AliasRetired':
        return state.status === 'absent' ? state : { ...state, status: 'retired' };
      default:
        return assertNever(event);
    }
  },
};
