import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import { BytePairRanks } from '../../modules/canonical/byte-pair-ranks.js';
import { countTokens } from '../../modules/canonical/tokenizer.js';

// js-tiktoken's own encoder is the reference every count here is checked against.
const reference = new Tiktoken(cl100kBase);
const referenceCount = (text: string) => reference.encode(text, [], []).length;
const ranks = BytePairRanks.parse(cl100kBase.bpe_ranks);

// Prose, code, markup and scripts of several kinds: Latin with diacritics, Cyrillic, Greek, Arabic,
// Hebrew, Devanagari, Thai, CJK, Hangul, emoji with modifiers and joiners, combining marks, a lone
// surrogate (encoded as U+FFFD), control characters and whitespace of every width. No sample has a run
// of 33 characters without whitespace: countTokens counts those in slices, a deliberate over-count.
const SAMPLES = [
  'The quick brown fox jumps over the lazy dog. Naïve café façade — déjà vu; smörgåsbord, Ærø, Œuvre.',
  'Съешь же ещё этих мягких французских булок, да выпей чаю. Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.',
  'العربية: نص تجريبي للعد. עברית: טקסט לדוגמה. हिन्दी: यह एक परीक्षण है। ภาษาไทย: ทดสอบการนับ',
  '中文：敏捷的棕色狐狸跳过了懒狗。日本語：いろはにほへと ちりぬるを。한국어: 다람쥐 헌 쳇바퀴에 타고파',
  'Emoji 😀😃😄 👩‍👩‍👧‍👦 👍🏽 🇩🇪🇯🇵 ❤️‍🔥 and e\u0301 a\u0308 combining, \ud800 lone, \u0000\u0007 control, \u2028\u2029 separators',
  'function add(a: number, b: number): number {\n\treturn a + b; // sum\n}\n\nconst x = add(1, 2) ?? 0;\n',
  '{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.2, "max_tokens": 256}',
  '<div class="card"><p>Hello &amp; welcome</p></div>\r\n  \t  \n\n\n    spaces    and\u00a0nbsp\u3000ideographic',
  "I'm sure they'll say it's fine; we've seen THEY'RE and I'D and YOU'LL. 1234567 12 3.14159 0xDEADBEEF",
  '    indented\n        more\n\ttab\n\n',
  // Pieces named like Object.prototype's members: the tables are Maps, so these are text like any other.
  '__proto__ constructor hasOwnProperty toString valueOf __defineGetter__ prototype',
];

describe('BytePairRanks (cl100k_base)', () => {
  it('holds every rank js-tiktoken holds', () => {
    expect(ranks.size).toBe((reference as unknown as { rankMap: Map<string, number> }).rankMap.size);
  });

  it('refuses a table in which a single byte is no token (counting relies on every byte being one)', () => {
    const withoutByteA = cl100kBase.bpe_ranks.split('\n').map((line) => line.split(' ').filter((field) => field !== 'YQ==').join(' ')).join('\n');
    expect(() => BytePairRanks.parse(withoutByteA)).toThrow('no token for byte 97');
  });

  it('counts each pre-tokenized piece as js-tiktoken encodes it', () => {
    const pieces = new RegExp(cl100kBase.pat_str, 'gu');
    let checked = 0;
    for (const sample of SAMPLES) {
      for (const [piece] of sample.matchAll(pieces)) {
        expect([piece, ranks.count(piece)]).toEqual([piece, referenceCount(piece)]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(200);
    expect(ranks.count('')).toBe(0);
  });

  it('merges runs of a repeated character or pair as js-tiktoken does', () => {
    // Such runs merge in rounds where several adjacent pairs have the same rank.
    for (const piece of ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'abababababababababab', '!!!!!!!!!!!!!!!!', '😀😀😀😀😀😀', 'ЖЖЖЖЖЖЖЖЖЖ', '中中中中中中中']) {
      expect([piece, ranks.count(piece)]).toEqual([piece, referenceCount(piece)]);
    }
  });
});

describe('countTokens against js-tiktoken', () => {
  it('counts whole texts of every script as js-tiktoken does, the first time and from kept pieces', () => {
    for (const sample of SAMPLES) expect([sample, countTokens(sample)]).toEqual([sample, referenceCount(sample)]);
    for (const sample of SAMPLES) expect([sample, countTokens(sample)]).toEqual([sample, referenceCount(sample)]);
    const joined = SAMPLES.join('\n');
    expect(countTokens(joined)).toBe(referenceCount(joined));
  });
});
