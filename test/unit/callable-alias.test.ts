import { GatewayError } from '../../modules/canonical/gateway-error.js';
import { callableAlias, listedFor, mayCall } from '../../modules/inference/pipeline/callable-alias.js';
import type { Principal } from '../../projections/key-index/principal.js';
import { ContentPolicyIndex } from '../../projections/routing-snapshot/content-policy-index.js';
import { type ResolvedAlias, type RoutingSnapshot, routingSnapshot } from '../../projections/routing-snapshot/routing-snapshot.js';
import { testPrincipal } from '../support/pipeline-fakes.js';
import { testAlias, testDeployment } from '../support/routing-fixtures.js';

const key = testPrincipal;

const deployment = testDeployment('gpt-deployment');
const chat = testAlias([deployment], 'chat');
const embed = testAlias([deployment], 'embed');
const internal: ResolvedAlias = { ...testAlias([deployment], 'internal'), visibility: 'private' };
const snapshot: RoutingSnapshot = routingSnapshot(
  7, new Map([chat, embed, internal].map((a) => [a.name, a])), new Map([[deployment.id, deployment]]), ContentPolicyIndex.EMPTY,
);

/** The error callableAlias refuses with, or a failure when it did not refuse. */
function refusal(principal: Principal, model: string): GatewayError {
  try {
    callableAlias(snapshot, principal, model);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error(`${model} was callable`);
}

describe('the one alias-access rule', () => {
  test('a key without an allowlist calls any public alias; a key with one calls the aliases it names', () => {
    expect(callableAlias(snapshot, key(null), 'chat')).toBe(chat);
    expect(callableAlias(snapshot, key(['chat']), 'chat')).toBe(chat);
  });

  test("an alias outside the key's allowlist is 404 model_not_found on param model, exactly as an alias that does not exist", () => {
    const excluded = refusal(key(['chat']), 'embed');
    const unknown = refusal(key(['chat']), 'no-such-alias');
    expect(excluded).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    expect(unknown).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    // Nothing tells the two apart, so a key cannot probe for aliases it may not use.
    expect(excluded.message.replace('embed', 'X')).toBe(unknown.message.replace('no-such-alias', 'X'));
  });

  test('a deployment id, or an object member name, is no alias', () => {
    expect(refusal(key(null), deployment.id)).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(refusal(key(null), 'constructor')).toMatchObject({ status: 404, code: 'model_not_found' });
  });

  test('a private alias is callable only by a key that names it; an unrestricted key does not see it', () => {
    expect(callableAlias(snapshot, key(['internal']), 'internal')).toBe(internal);
    expect(refusal(key(null), 'internal')).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(refusal(key(['chat']), 'internal')).toMatchObject({ status: 404, code: 'model_not_found' });
  });

  test('/v1/models lists the public aliases a key may call, never a private one, even to a key that may call it', () => {
    const listed = (principal: Principal) => [chat, embed, internal].filter((a) => listedFor(principal, a)).map((a) => a.name);
    expect(listed(key(null))).toEqual(['chat', 'embed']);
    expect(listed(key(['embed', 'internal']))).toEqual(['embed']);
    expect(mayCall(key(['embed', 'internal']), internal)).toBe(true);
  });
});
