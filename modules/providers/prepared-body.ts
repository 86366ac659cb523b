import { RequestScoped } from '../../src/kernel/index.js';

/**
 * The serialized upstream body of one canonical request, built and stringified once per target: a
 * retry of the same deployment (or a later candidate that needs the identical body) sends the string
 * prepared for the first attempt, instead of translating the request and its tool-call history again.
 *
 * `target` is what the body depends on besides the request (the deployment, whose model and limits may
 * be in the body; or the adapter itself when the body is the same for every deployment), `variant` the
 * rest (`stream`, `buffered`, `embeddings`). Targets are told apart by identity: a routing-snapshot swap
 * yields new deployment objects, so a changed deployment never reuses a body built for its predecessor. Requests
 * are never mutated once parsed, which is what makes the cache sound. The bodies live on the request
 * (RequestScoped) and go with it.
 */
const prepared = new RequestScoped<object, Map<object, Map<string, string>>>('switchyard.preparedBody');

export function preparedBody(request: object, target: object, variant: string, build: () => unknown): string {
  let byTarget = prepared.get(request);
  if (!byTarget) prepared.set(request, (byTarget = new Map()));
  let byVariant = byTarget.get(target);
  if (!byVariant) byTarget.set(target, (byVariant = new Map()));
  let body = byVariant.get(variant);
  if (body === undefined) {
    body = JSON.stringify(build());
    byVariant.set(variant, body);
  }
  return body;
}
