/** A field-by-field difference of two JSON values, as `routes[1].weight: 1 → 3` lines (the dry-run's diff). */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

export function diff(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (isRecord(before) && isRecord(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => diff(before[key], after[key], path ? `${path}.${key}` : key));
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    return Array.from({ length }, (_, index) => diff(before[index], after[index], `${path}[${index}]`)).flat();
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ field: path || '(value)', from: before, to: after }];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
