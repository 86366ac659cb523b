import { GatewayError, invalidRequest, unsupportedParameter } from './gateway-error.js';
import { isPrototypeMemberName } from './prototype-member-names.js';

/**
 * Bounds on client JSON, checked once at parse time so that nothing downstream (token estimates,
 * provider request builders, JSON.stringify) can be made to overflow the stack or run away.
 *
 * - A structured field (messages, content parts, tool definitions, metadata…) nests at most
 *   `structuralDepth` levels below the body: the wire formats need 7.
 * - A client-defined value (a JSON Schema, a tool's input) nests at most `valueDepth` levels below the
 *   field that holds it and has at most `valueNodes` values; real schemas nest under 20 levels, and
 *   OpenAI's own structured outputs allow 10.
 * - A body holds at most `bodyNodes` values in all.
 */
export interface JsonLimits {
  structuralDepth: number;
  valueDepth: number;
  valueNodes: number;
  bodyNodes: number;
}

export const JSON_LIMITS: JsonLimits = { structuralDepth: 32, valueDepth: 64, valueNodes: 20_000, bodyNodes: 200_000 };

/** `tools[0].function` (OpenAI, the admin API) or `tools.0.function` (Anthropic). */
export type PathStyle = 'brackets' | 'dots';

/** What a body looks like to the bounds check: where client-defined values sit. */
export interface JsonShape {
  pathStyle: PathStyle;
  /**
   * Paths of client-defined values, as segments; `*` matches any array index. Inside them any key is
   * allowed except `__proto__`; outside them keys named like Object.prototype members are refused.
   */
  freeForm: ReadonlyArray<readonly string[]>;
}

export type JsonBoundsProblem =
  /** `path` is the client-defined value that nests too deep, or the structured node past the limit. */
  | { kind: 'too_deep'; path: string; limit: number }
  /** `path` is the client-defined value with too many values, or null for the body as a whole. */
  | { kind: 'too_many_values'; path: string | null; limit: number }
  | { kind: 'prototype_key'; path: string };

interface Frame {
  value: unknown;
  parent: Frame | null;
  key: string | number | null;
  depth: number;
  /** Indices of freeForm patterns whose segments match this node's path so far. */
  matching: readonly number[];
  /** The client-defined value this node belongs to, if any. */
  root: Frame | null;
  /** Values counted inside this node, when it is a client-defined value's root. */
  count: number;
}

const NONE: readonly number[] = [];

/**
 * Walks a parsed body once, iteratively (no recursion a client can overflow), in document order, and
 * returns the first problem found, or null.
 */
export function findJsonBoundsProblem(body: unknown, shape: JsonShape, limits: JsonLimits = JSON_LIMITS): JsonBoundsProblem | null {
  const stack: Frame[] = [];
  let total = 0;
  // Values are counted as they are found, so the stack never holds more than the body may.
  const push = (frame: Frame): JsonBoundsProblem | null => {
    if (++total > limits.bodyNodes) return { kind: 'too_many_values', path: null, limit: limits.bodyNodes };
    const root = frame.root;
    if (root && ++root.count > limits.valueNodes) return { kind: 'too_many_values', path: pathOf(root, shape.pathStyle), limit: limits.valueNodes };
    stack.push(frame);
    return null;
  };
  push({ value: body, parent: null, key: null, depth: 0, matching: shape.freeForm.map((_, i) => i), root: null, count: 0 });
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const root = frame.root;
    if (root) {
      if (frame.depth - root.depth > limits.valueDepth) return { kind: 'too_deep', path: pathOf(root, shape.pathStyle), limit: limits.valueDepth };
    } else if (frame.depth > limits.structuralDepth) {
      return { kind: 'too_deep', path: pathOf(frame, shape.pathStyle), limit: limits.structuralDepth };
    }
    const value = frame.value;
    if (typeof value !== 'object' || value === null) continue;
    let problem: JsonBoundsProblem | null = null;
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0 && !problem; index--) problem = push(child(frame, index, value[index], shape));
    } else {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0 && !problem; i--) {
        const key = keys[i];
        const next = child(frame, key, (value as Record<string, unknown>)[key], shape);
        // Inside a client-defined value (a schema may well have a property named "constructor") only
        // __proto__ is refused; everywhere else no key may name an Object.prototype member.
        if (key === '__proto__' || (!root && isPrototypeMemberName(key))) return { kind: 'prototype_key', path: pathOf(next, shape.pathStyle) };
        problem = push(next);
      }
    }
    if (problem) return problem;
  }
  return null;
}

/** The 400 a client gets for a body outside the bounds, naming the parameter. */
export function assertJsonWithinBounds(body: unknown, shape: JsonShape, limits: JsonLimits = JSON_LIMITS): void {
  const problem = findJsonBoundsProblem(body, shape, limits);
  if (problem) throw jsonBoundsError(problem);
}

export function jsonBoundsError(problem: JsonBoundsProblem): GatewayError {
  switch (problem.kind) {
    case 'prototype_key':
      return unsupportedParameter(problem.path, 'keys named like Object.prototype members (constructor, toString, __proto__, …) are not parameters of any API; remove it.');
    case 'too_deep':
      return invalidRequest(`${problem.path}: nests deeper than ${problem.limit} levels, the most Switchyard accepts here.`, problem.path);
    case 'too_many_values':
      return problem.path === null
        ? invalidRequest(`The request body holds more than ${problem.limit} JSON values, the most Switchyard accepts.`)
        : invalidRequest(`${problem.path}: holds more than ${problem.limit} JSON values, the most Switchyard accepts in one value.`, problem.path);
  }
}

function child(parent: Frame, key: string | number, value: unknown, shape: JsonShape): Frame {
  const depth = parent.depth + 1;
  let matching = NONE;
  const root = parent.root;
  if (!root && parent.matching.length > 0) {
    const next: number[] = [];
    for (const index of parent.matching) {
      const segment = shape.freeForm[index][depth - 1];
      if (segment === String(key) || (segment === '*' && typeof key === 'number')) next.push(index);
    }
    matching = next;
  }
  const frame: Frame = { value, parent, key, depth, matching, root, count: 0 };
  if (!root && matching.some((index) => shape.freeForm[index].length === depth)) {
    frame.root = frame;
    frame.matching = NONE;
  }
  return frame;
}

function pathOf(frame: Frame, style: PathStyle): string {
  const keys: Array<string | number> = [];
  for (let at: Frame | null = frame; at && at.key !== null; at = at.parent) keys.push(at.key);
  let path = '';
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i];
    if (typeof key === 'number' && style === 'brackets') path += `[${key}]`;
    else path += path.length === 0 ? String(key) : `.${key}`;
  }
  return path;
}

/**
 * Whether JSON text nests deeper than `limit` (strings are skipped, so brackets inside them do not
 * count). For client strings that a provider request builder parses, such as tool-call arguments.
 */
export function jsonTextNestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
