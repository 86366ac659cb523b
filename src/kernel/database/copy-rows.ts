import { PLAIN_IDENTIFIER } from './database.js';

/** One column's value in a bulk load: null is SQL NULL, the rest as PostgreSQL reads their text. */
export type CopyValue = string | number | boolean | null;

/**
 * The `COPY` statement that loads `columns` of `table` from PGlite's blob, as CSV. Only plain identifiers:
 * the names are written into the statement.
 */
export function copyStatement(table: string, columns: readonly string[]): string {
  for (const name of [table, ...columns]) if (!PLAIN_IDENTIFIER.test(name)) throw new Error(`Not a plain identifier: ${name}`);
  return `COPY ${table} (${columns.join(', ')}) FROM '/dev/blob' WITH (FORMAT csv)`;
}

/**
 * Rows as CSV for `COPY … WITH (FORMAT csv)`. Every string is quoted (its quotes doubled), so a comma, a
 * quote, a line break or a lone `\.` in a tenant's or an alias's name is data, never syntax; NULL is the
 * unquoted empty field, which no quoted string can be (an empty string is `""`). A number that is not finite
 * becomes NULL, as JSON.stringify writes it, rather than PostgreSQL's `NaN`: both ways of writing rows
 * (this and a JSON parameter) then store the same values or fail the same way.
 */
export function csvRows(rows: readonly (readonly CopyValue[])[]): string {
  let csv = '';
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      if (i > 0) csv += ',';
      csv += csvField(row[i]);
    }
    csv += '\n';
  }
  return csv;
}

function csvField(value: CopyValue): string {
  if (value === null) return '';
  if (typeof value === 'string') return `"${value.replaceAll('"', '""')}"`;
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return Number.isFinite(value) ? String(value) : '';
}
