/**
 * A byte-pair encoding's merge ranks, kept as compactly as a Map allows, and the count of tokens one
 * pre-tokenized piece encodes to.
 *
 * js-tiktoken keys its rank table by each token's bytes joined with commas ("104,101,108"): 100k strings
 * four times longer than the token, built through a 100k-property object and 100k byte arrays, which grew
 * a serving process's heap by about 40 MB at start-up for a table that then held 8 MB. Here a token's
 * bytes are the key itself, as a one-byte string (each character one byte, `latin1`): built in a quarter
 * of the time, 6.5 MB held, and a piece's lookups need no joining.
 *
 * The merge is js-tiktoken's (and tiktoken's): repeatedly join the adjacent pair whose bytes have the
 * lowest rank, the leftmost on a tie, until no adjacent pair is a token; each part left is one token.
 * The tokenizer's tests compare every count with js-tiktoken's own encoder.
 */
export class BytePairRanks {
  private constructor(private readonly ranks: Map<string, number>) {}

  /**
   * From tiktoken's rank file as js-tiktoken ships it (`bpe_ranks`): lines of `<name> <first rank>` and
   * then base64 tokens of consecutive ranks.
   */
  static parse(bpeRanks: string): BytePairRanks {
    const ranks = new Map<string, number>();
    for (const line of bpeRanks.split('\n')) {
      if (line.length === 0) continue;
      const fields = line.split(' ');
      const first = Number.parseInt(fields[1], 10);
      for (let i = 2; i < fields.length; i++) ranks.set(Buffer.from(fields[i], 'base64').toString('latin1'), first + i - 2);
    }
    // Every single byte is a token (a byte-level vocabulary): then every part a merge leaves is one, and a
    // piece's count is its number of parts.
    for (let byte = 0; byte < 256; byte++) {
      if (!ranks.has(String.fromCharCode(byte))) throw new Error(`the rank table has no token for byte ${byte}: not a byte-level BPE`);
    }
    return new BytePairRanks(ranks);
  }

  get size(): number {
    return this.ranks.size;
  }

  /** How many tokens one piece of the encoding's pre-tokenization encodes to. */
  count(piece: string): number {
    const bytes = asBytes(piece);
    if (bytes.length === 0) return 0;
    if (bytes.length === 1 || this.ranks.has(bytes)) return 1;
    return this.merged(bytes);
  }

  private merged(bytes: string): number {
    // starts[i] is where part i begins; the last entry is the end of the piece.
    const starts: number[] = [];
    for (let i = 0; i <= bytes.length; i++) starts.push(i);
    while (starts.length > 2) {
      let lowest = -1;
      let at = -1;
      for (let i = 0; i + 2 < starts.length; i++) {
        const rank = this.ranks.get(bytes.slice(starts[i], starts[i + 2]));
        if (rank !== undefined && (lowest < 0 || rank < lowest)) {
          lowest = rank;
          at = i;
        }
      }
      if (at < 0) break;
      starts.splice(at + 1, 1);
    }
    // Each part is a single byte or a merged pair, both tokens (see `parse`).
    return starts.length - 1;
  }
}

/** A piece's UTF-8 bytes as a one-byte string; ASCII text is that already. */
function asBytes(piece: string): string {
  for (let i = 0; i < piece.length; i++) {
    if (piece.charCodeAt(i) > 0x7f) return Buffer.from(piece, 'utf8').toString('latin1');
  }
  return piece;
}
