/** The control plane's public surface: every catalog and access aggregate's state, folded as the deciders fold it (events/*-state.ts). */
export { ControlPlaneState, splitStream } from './control-plane-state.js';
