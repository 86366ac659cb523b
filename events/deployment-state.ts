import { assertNever, type StateFold } from '../src/kernel/index.js';
import type { DeploymentEvent, DeploymentSettings } from './deployment-events.js';

export type DeploymentStatus = 'active' | 'disabled' | 'retired';

/** A deployment as its events leave it: what the catalog decides on and the routing snapshot folds. */
export type DeploymentState =
  | { status: 'absent' }
  | { status: DeploymentStatus; deploymentId: string; settings: DeploymentSettings };

export const deploymentFold: StateFold<DeploymentEvent, DeploymentState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'DeploymentRegistered': {
        const { deploymentId, ...settings } = event.data;
        return { status: 'active', deploymentId, settings };
      }
      case 'DeploymentUpdated': {
        const { deploymentId, ...settings } = event.data;
        return { status: state.status === 'absent' ? 'active' : state.status, deploymentId, settings };
      }
      case 'DeploymentDisabled':
        return state.status === 'absent' ? state : { ...state, status: 'disabled' };
      case 'DeploymentEnabled':
        return state.status === 'absent' ? state : { ...state, status: 'active' };
      case 'DeploymentRetired':
        return state.status === 'absent' ? state : { ...state, status: 'retired' };
      default:
        return assertNever(event);
    }
  },
};
