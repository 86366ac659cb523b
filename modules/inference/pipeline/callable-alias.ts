import { GatewayError } from '../../canonical/index.js';
import { mayUseAlias, type Principal } from '../../../projections/key-index/index.js';
import type { ResolvedAlias, RoutingSnapshot } from '../../../projections/routing-snapshot/index.js';

/**
 * The one alias-access rule, for every operation and for `/v1/models`: a key may call an alias in its
 * allowlist (or any alias when it has none); a private alias needs the key to name it explicitly.
 * Anything else is "not found", so that a caller cannot probe for aliases it may not use.
 */
export function mayCall(principal: Principal, alias: ResolvedAlias): boolean {
  return mayUseAlias(principal, alias.name) && (alias.visibility === 'public' || principal.aliases !== null);
}

/** What `/v1/models` lists: public aliases the key may call. */
export function listedFor(principal: Principal, alias: ResolvedAlias): boolean {
  return alias.visibility === 'public' && mayCall(principal, alias);
}

/** The alias a request names, if this principal may call it; otherwise 404 model_not_found. */
export function callableAlias(snapshot: RoutingSnapshot, principal: Principal, model: string): ResolvedAlias {
  const alias = snapshot.aliases.get(model);
  if (!alias || !mayCall(principal, alias)) throw modelNotFound(model);
  return alias;
}

export function modelNotFound(model: string): GatewayError {
  return new GatewayError(404, 'model_not_found', `The model '${model}' does not exist or you do not have access to it.`, 'model');
}
