/**
 * The text as a model reads it, for the input checks' second look: a value written with characters that hide it from
 * the detectors but not from the model — fullwidth digits (`４１１１`), a no-break or zero-width space inside a card
 * number, `＠` or `。` in an address, a Cyrillic `о` in a denied term — would otherwise pass a `block` rule untouched.
 * Compatibility forms are folded (NFKC), characters that draw nothing are dropped, and letters of other scripts drawn
 * like Latin ones (the common ones of Unicode's confusables, UTS #39) are read as those.
 */

/** Characters that draw nothing (soft hyphen, zero-width and directional marks, the word joiner, the BOM). */
const INVISIBLE = /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0]/g;

/** Cyrillic and Greek letters drawn like Latin ones, and full stops that read as one (applied after folding). */
const LOOKALIKES: Readonly<Record<string, string>> = {
  // Cyrillic, lower case
  'а': 'a', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'һ': 'h', 'і': 'i', 'ј': 'j', 'ӏ': 'l', 'о': 'o', 'р': 'p', 'ԛ': 'q', 'г': 'r',
  'ѕ': 's', 'ѵ': 'v', 'ԝ': 'w', 'х': 'x', 'у': 'y',
  // Cyrillic, upper case
  'А': 'A', 'В': 'B', 'С': 'C', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'О': 'O', 'Р': 'P', 'Ѕ': 'S',
  'Т': 'T', 'Х': 'X', 'У': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W',
  // Greek
  'α': 'a', 'ι': 'i', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'υ': 'u',
  'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T',
  'Υ': 'Y', 'Χ': 'X',
  // Full stops: ideographic and halfwidth ideographic (NFKC folds the second to the first only)
  '\u3002': '.', '\uFF61': '.',
};
const LOOKALIKE = new RegExp(`[${Object.keys(LOOKALIKES).join('')}]`, 'g');
const NOT_ASCII = /[^\x00-\x7F]/;

/**
 * The forms of `text` a model reads the same, besides itself, the closest first: compatibility forms folded and
 * invisible characters dropped; then, in that, lookalike letters read as Latin. Empty for an ASCII text (no cost
 * there) and for one that folds to itself.
 */
export function readingForms(text: string): string[] {
  if (!NOT_ASCII.test(text)) return [];
  const folded = text.normalize('NFKC').replace(INVISIBLE, '');
  const skeleton = folded.replace(LOOKALIKE, (letter) => LOOKALIKES[letter]);
  return [folded, skeleton].filter((form, index, forms) => form !== text && forms.indexOf(form) === index);
}
