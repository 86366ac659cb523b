/**
 * A strict RFC 4180 reader for tests: CRLF between records (and after the last), fields quoted with `"`
 * when they hold a comma, a quote or a line break, `""` for a quote inside. Anything else throws, so a
 * test that parses an answer also checks that it is well-formed CSV.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  if (!text.endsWith('\r\n')) throw new Error('CSV: the last record does not end with CRLF');
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('CSV: unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`CSV: a quote inside an unquoted field at ${i}`);
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ',') {
      i++;
    } else if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
    } else {
      throw new Error(`CSV: expected a comma or CRLF at ${i}`);
    }
  }
  const width = records[0]?.length;
  const ragged = records.findIndex((r) => r.length !== width);
  if (ragged >= 0) throw new Error(`CSV: record ${ragged} has ${records[ragged].length} fields, the header ${width}`);
  return records;
}

/** The records after the header as objects keyed by the header's names. */
export function csvObjects(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  return rows.map((row) => Object.fromEntries(header.map((name, column) => [name, row[column]])));
}
