import type { PlaceholderKeys } from './placeholder-keys.js';
import { TokenVault } from './token-vault.js';

/**
 * Request scope (the default): the mapping lives in this object, owned by the request, and nowhere else — no I/O
 * on the request path. A placeholder from another request never resolves here (its MAC binds its own request).
 */
export class RequestTokenVault extends TokenVault {
  constructor(keys: PlaceholderKeys, tenantId: string, requestId: string) {
    super(keys, { tenantId, kind: 'request', id: requestId });
  }
}
