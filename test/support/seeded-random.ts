/**
 * A small deterministic PRNG (mulberry32): numbers in [0, 1), the same sequence for a seed on every machine — so a
 * generated corpus, log or fuzz case is the same every run, and a failing seed can be replayed.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
