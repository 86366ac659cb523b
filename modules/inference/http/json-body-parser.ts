import { GatewayError, type PathStyle, unsupportedParameter } from '../../canonical/index.js';

/**
 * The gateway's only body parser (`application/json`, every route). JSON.parse itself is iterative, so no
 * nesting overflows it; what it cannot do is refuse keys that would rewrite a prototype if the object were
 * ever merged into another: `__proto__` anywhere, and `constructor` holding a `prototype` (what Fastify's
 * own parser refuses with `onProtoPoisoning`/`onConstructorPoisoning: 'error'`). Here they are refused as
 * unsupported parameters, named by their path. Depth and size are bounded by each client format, which
 * knows where a body holds client-defined JSON.
 */
export function parseJsonBody(text: string, pathStyle: PathStyle): unknown {
  if (text.length === 0) throw new GatewayError(400, 'invalid_json', 'The request body is empty; send a JSON object.');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new GatewayError(400, 'invalid_json', 'The request body is not valid JSON.');
  }
  // Such a key can only be spelled literally or with \u escapes; most bodies need no walk at all.
  if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) {
    const path = poisonedKeyPath(body, pathStyle);
    if (path !== null) throw unsupportedParameter(path, 'keys that rewrite prototypes (__proto__, constructor.prototype) are refused; remove it.');
  }
  return body;
}

interface Node {
  value: unknown;
  path: string;
}

/** The path of the first key that could rewrite a prototype, or null; an iterative walk. */
function poisonedKeyPath(body: unknown, style: PathStyle): string | null {
  const stack: Node[] = [{ value: body, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        if (typeof value[i] === 'object' && value[i] !== null) stack.push({ value: value[i], path: style === 'brackets' ? `${path}[${i}]` : join(path, String(i)) });
      }
      continue;
    }
    for (const key of Object.keys(value)) {
      const member = (value as Record<string, unknown>)[key];
      if (key === '__proto__') return join(path, key);
      if (key === 'constructor' && typeof member === 'object' && member !== null && Object.hasOwn(member, 'prototype')) return join(join(path, key), 'prototype');
      if (typeof member === 'object' && member !== null) stack.push({ value: member, path: join(path, key) });
    }
  }
  return null;
}

function join(path: string, key: string): string {
  return path.length === 0 ? key : `${path}.${key}`;
}
