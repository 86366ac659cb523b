/** Display formats shared by every page (UTC timestamps, as the API and the CLI write them). */

export function usd(value: string | number | null | undefined, digits = 4): string {
  if (value === null || value === undefined || value === '') return '—';
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(number)) return String(value);
  // Fractions of a cent (one request's cost) keep their significant digits rather than reading as $0.00.
  const small = number !== 0 && Math.abs(number) < 0.01;
  return `$${number.toLocaleString('en-US', small ? { maximumSignificantDigits: 3 } : { minimumFractionDigits: 2, maximumFractionDigits: digits })}`;
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString('en-US');
}

export function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${Math.round(value).toLocaleString('en-US')} ms`;
}

export function when(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
}

export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value.toLocaleString('en-US', { maximumFractionDigits: 1 })}%`;
}

/** A JSON value as a compact, readable line (for diffs and event data). */
export function shown(value: unknown): string {
  if (value === undefined) return '(absent)';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
