/** The key index's public surface: per node, in memory, each live gateway key's principal. */
export { KeyIndexProjection } from './key-index.projection.js';
export { mayUseAlias, type Principal } from './principal.js';
