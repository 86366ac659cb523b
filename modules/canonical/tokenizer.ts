import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';

/**
 * A real BPE tokenizer (cl100k_base) for admission reservations, count_tokens estimates and billing
 * when a provider reports no usage. Every provider tokenizes differently, so every count from here is
 * an estimate; cl100k is chosen over o200k because it builds in a third of the time and memory
 * (≈0.35 s and ≈80 MB once per process) while counting within a few percent on ordinary text.
 */
let encoder: Tiktoken | null = null;

/** Builds the encoder now (start-up) so the first request does not pay for it. */
export function warmTokenizer(): void {
  encoder ??= new Tiktoken(cl100kBase);
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

function encodedLength(bpe: Tiktoken, text: string): number {
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
