import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import { BytePairRanks } from './byte-pair-ranks.js';

/**
 * A real BPE tokenizer (cl100k_base) for admission reservations, count_tokens estimates and billing
 * when a provider reports no usage. Every provider tokenizes differently, so every count from here is
 * an estimate; cl100k is chosen over o200k because it builds in a third of the time and memory while
 * counting within a few percent on ordinary text. The ranks are js-tiktoken's; the counting is
 * `BytePairRanks` (a compact table, built in ≈65 ms, no decode table: Switchyard never decodes).
 */
let ranks: BytePairRanks | null = null;

/** Builds the rank table now (start-up) so the first request does not pay for it. */
export function warmTokenizer(): void {
  ranks ??= BytePairRanks.parse(cl100kBase.bpe_ranks);
}

/**
 * BPE merging is quadratic in the length of one pre-tokenized piece; a long run without whitespace
 * (base64, "aaaa…") would take seconds. Such runs are counted in slices: a slice boundary can only
 * add a token, never lose one, so the estimate stays a slight over-count.
 */
const LONG_RUN = /(\S{33,})/;
const SLICE = 32;
/**
 * Counting runs on the event loop (measured: ≈0.05 µs per character of prose whose pieces are kept,
 * ≈0.06 µs for prose never seen, more for text of many multi-byte pieces), so a 1 MB prompt would stall
 * every request on the node. Beyond this many characters the count is extrapolated from the exactly
 * counted head at its own tokens-per-character ratio.
 */
const EXACT_CHARS = 16_384;

/**
 * cl100k's own pre-tokenization pattern, compiled once. A text's count is the sum over this pattern's
 * matches of the BPE tokens of each match. Texts are the client's: a special-token marker in one
 * (`<|endoftext|>`) is text like any other to a count, so no special token is looked for. Each match
 * counted on its own is that same single match: of the pattern's alternatives only `\s+(?!\S)` looks past
 * what it consumes, and a whitespace piece on its own is matched whole by it. So a piece's count can be
 * kept (the test suite checks equality with js-tiktoken encoding the whole text), and a kept piece skips
 * its UTF-8 encoding, rank lookups and merging.
 */
const PIECES = new RegExp(cl100kBase.pat_str, 'gu');
/**
 * Counts of pieces, kept: a kept piece costs one lookup, while counting it costs a UTF-8 check, a rank
 * lookup and, for a piece of several tokens, a lookup per adjacent pair per merge round. Pieces longer
 * than KEPT_PIECE_CHARS (rare: long whitespace or punctuation runs) are not kept.
 */
const KEPT_PIECE_CHARS = 24;
/** Bounds the kept counts (about 2 MB at most); when full it starts over. */
const KEPT_PIECES = 16_384;
const pieceTokens = new Map<string, number>();

function encodedLength(bpe: BytePairRanks, text: string): number {
  let total = 0;
  PIECES.lastIndex = 0;
  for (let match = PIECES.exec(text); match !== null; match = PIECES.exec(text)) {
    const piece = match[0];
    if (piece.length === 0) {
      PIECES.lastIndex++; // cl100k's alternatives all consume; this only rules out an endless loop
      continue;
    }
    const kept = pieceTokens.get(piece);
    if (kept !== undefined) {
      total += kept;
      continue;
    }
    const tokens = bpe.count(piece);
    if (piece.length <= KEPT_PIECE_CHARS) {
      if (pieceTokens.size >= KEPT_PIECES) pieceTokens.clear();
      pieceTokens.set(detached(piece), tokens);
    }
    total += tokens;
  }
  return total;
}

/**
 * A copy of a piece that does not hold on to the text it was matched in: V8 keeps a longer substring
 * as a view into its parent, so a kept piece would otherwise keep a whole prompt alive.
 */
function detached(piece: string): string {
  return ` ${piece}`.slice(1);
}

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length <= EXACT_CHARS) return exactCount(text);
  const head = exactCount(text.slice(0, EXACT_CHARS));
  return Math.ceil((head * text.length) / EXACT_CHARS);
}

function exactCount(text: string): number {
  warmTokenizer();
  const bpe = ranks!;
  if (!LONG_RUN.test(text)) return encodedLength(bpe, text);
  let total = 0;
  // split with a capturing group alternates plain text (even indexes) and long runs (odd indexes)
  text.split(LONG_RUN).forEach((piece, index) => {
    if (piece.length === 0) return;
    if (index % 2 === 0) {
      total += encodedLength(bpe, piece);
      return;
    }
    for (let at = 0; at < piece.length; at += SLICE) total += encodedLength(bpe, piece.slice(at, at + SLICE));
  });
  return total;
}
