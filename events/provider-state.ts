import { assertNever, type StateFold } from '../src/kernel/index.js';
import type { ProviderEvent, ProviderSettings } from './provider-events.js';

/** A provider as its events leave it: what the catalog decides on and the routing snapshot folds. */
export type ProviderState =
  | { status: 'absent' }
  | { status: 'active' | 'removed'; providerId: string; settings: ProviderSettings };

export const providerFold: StateFold<ProviderEvent, ProviderState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'ProviderRegistered':
      case 'ProviderUpdated': {
        const { providerId, ...settings } = event.data;
        return { status: 'active', providerId, settings };
      }
      case 'ProviderRemoved':
        return state.status === 'absent' ? state : { ...state, status: 'removed' };
      default:
        return assertNever(event);
    }
  },
};
