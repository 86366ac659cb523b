import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';

/**
 * A real BPE tokenizer (cl100k_base) for admission reservations, count_tokens estimates and billing
 * when a provider reports no usage. Every provider tokenizes differently, so every count from here is
 * an estimate; cl100k is chosen over o200k because it builds in a third of the time and memory
 * (≈0.35 s and ≈80 MB once per process, of which the decode table is dropped) while counting within a few
 * percent on ordinary text.
 */
let encoder: Tiktoken | null = null;

/** Builds the encoder now (start-up) so the first request does not pay for it. */
export function warmTokenizer(): void {
  encoder ??= countingOnly(new Tiktoken(cl100kBase));
}

/**
 * Switchyard only counts tokens, never decodes them: the encoder's rank → bytes table (100k byte arrays,
 * 23 MB of heap in every serving process) is emptied once built. `textMap` is js-tiktoken's own field
 * (pinned 1.0.21); should a version rename it, nothing is dropped and counting is unaffected.
 */
function countingOnly(bpe: Tiktoken): Tiktoken {
  const decodeTable = (bpe as unknown as { textMap?: unknown }).textMap;
  if (decodeTable instanceof Map) decodeTable.clear();
  return bpe;
}

/**
 * BPE merging is quadratic in the length of one pre-tokenized piece; a long run without whitespace
 * (base64, "aaaa…") would take seconds. Such runs are counted in slices: a slice boundary can only
 * add a token, never lose one, so the estimate stays a slight over-count.
 */
const LONG_RUN = /(\S{33,})/;
const SLICE = 32;
/**
 * js-tiktoken is pure JavaScript (≈0.7 µs per character) and runs on the event loop, so a 1 MB prompt
 * would stall every request on the node for most of a second. Beyond this many characters the count
 * is extrapolated from the exactly counted head at its own tokens-per-character ratio.
 */
const EXACT_CHARS = 16_384;

/**
 * Texts are the client's: a special-token marker in one (`<|endoftext|>`) is text like any other to a
 * count. js-tiktoken's default (every special token disallowed) would throw on it, and scan every text
 * once more for such markers to do so; no special token allowed and none disallowed encodes all as text.
 */
const NO_SPECIAL_TOKENS: string[] = [];

/**
 * The encoder's own pre-tokenization (cl100k's pattern), compiled once. With no special tokens,
 * `encode(text)` is the sum over this pattern's matches of the BPE tokens of each match, and each match
 * encoded on its own is that same single match: of the pattern's alternatives only `\s+(?!\S)` looks
 * past what it consumes, and a whitespace piece on its own is matched whole by it. So a text's count is
 * the sum of its pieces' counts, and a piece's count can be kept (the test suite checks equality with
 * whole-text encoding). A kept piece skips everything js-tiktoken does per call (it rebuilds its
 * special-token regex and sets every time) and per piece (UTF-8 encoding, rank lookups, merging).
 */
const PIECES = new RegExp(cl100kBase.pat_str, 'gu');
/** Pieces longer than this (rare: long whitespace or punctuation runs) are not kept. */
const KEPT_PIECE_CHARS = 24;
/** Bounds the kept counts (about 2 MB at most); when full it starts over. */
const KEPT_PIECES = 16_384;
const pieceTokens = new Map<string, number>();
/**
 * Each piece not kept yet costs one encode call of its own (≈3 µs of overhead). A text with more
 * unknown pieces than this (4, one more per 256 characters) is encoded whole instead, so an unfamiliar
 * text costs about what it did without the kept counts (≈1% more); that many of its pieces are learned,
 * so text that recurs (system prompts, tool schemas) warms up over a few requests.
 */
function learnedPerText(text: string): number {
  return 4 + (text.length >> 8);
}

function encodedLength(bpe: Tiktoken, text: string): number {
  let total = 0;
  let unknown: string[] | null = null;
  const learning = learnedPerText(text);
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
    unknown ??= [];
    unknown.push(piece);
    if (unknown.length > learning) break;
  }
  if (unknown === null) return total;
  if (unknown.length > learning) {
    for (let i = 0; i < learning; i++) learn(bpe, unknown[i]);
    return encodeWhole(bpe, text);
  }
  for (const piece of unknown) total += learn(bpe, piece);
  return total;
}

function learn(bpe: Tiktoken, piece: string): number {
  const tokens = encodeWhole(bpe, piece);
  if (piece.length > KEPT_PIECE_CHARS) return tokens;
  if (pieceTokens.size >= KEPT_PIECES) pieceTokens.clear();
  pieceTokens.set(detached(piece), tokens);
  return tokens;
}

/**
 * A copy of a piece that does not hold on to the text it was matched in: V8 keeps a longer substring
 * as a view into its parent, so a kept piece would otherwise keep a whole prompt alive.
 */
function detached(piece: string): string {
  return ` ${piece}`.slice(1);
}

function encodeWhole(bpe: Tiktoken, text: string): number {
  return bpe.encode(text, NO_SPECIAL_TOKENS, NO_SPECIAL_TOKENS).length;
}

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length <= EXACT_CHARS) return exactCount(text);
  const head = exactCount(text.slice(0, EXACT_CHARS));
  return Math.ceil((head * text.length) / EXACT_CHARS);
}

function exactCount(text: string): number {
  warmTokenizer();
  const bpe = encoder!;
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
