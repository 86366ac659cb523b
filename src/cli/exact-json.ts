/**
 * JSON.parse, except that every number arrives as its source text (`1.5e-07` → the string `"1.5e-07"`):
 * money in a file must not pass through a binary float on its way to a decimal. Strings are skipped
 * whole (escapes included), so digits inside them are left alone; anything that is not JSON still throws
 * JSON.parse's own error.
 */
export function parseJsonExactNumbers(text: string): unknown {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const start = i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      out += text.slice(start, ++i);
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      // Not a JSON number: left as it is, for JSON.parse to refuse with its position.
      const token = match ? match[0] : c;
      out += match ? `"${token}"` : token;
      i += token.length;
    } else {
      out += c;
      i++;
    }
  }
  return JSON.parse(out);
}
