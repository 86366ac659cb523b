/**
 * Names of Object.prototype's members (`constructor`, `toString`, `hasOwnProperty`, `__proto__`, …).
 * A client key with one of these names, looked up on a plain object, finds the inherited member instead
 * of nothing; no wire format defines such a parameter, so parsers refuse them by name.
 */
const NAMES: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__']);

export function isPrototypeMemberName(key: string): boolean {
  return NAMES.has(key);
}
