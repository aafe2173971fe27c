/**
 * The values `H` stands for. They come from a hash of the seed (the schedule name) and the
 * field, so one schedule picks the same minute in every process and deployment, different
 * schedules spread out, and `H H * * *` does not tie the hour to the minute.
 */

export interface HashRange {
  readonly lo: number;
  readonly hi: number;
}

/** FNV-1a over UTF-16 code units, then a finalizer that spreads the low bits (the modulus uses them). */
export const hash32 = (text: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
};

const pick = (seed: string, field: string, span: number): number => hash32(`${field}\n${seed}`) % span;

/**
 * `H` / `H(a-b)`: one value of the range. With a step `/n`: every n-th value of the range
 * from a hashed start below lo + n; a step wider than the range leaves one hashed value.
 */
export const hashedValues = (range: HashRange, step: number | undefined, seed: string, field: string): number[] => {
  const span = range.hi - range.lo + 1;
  if (step === undefined || step > span) return [range.lo + pick(seed, field, span)];
  const out: number[] = [];
  for (let v = range.lo + pick(seed, field, step); v <= range.hi; v += step) out.push(v);
  return out;
};

/** A bare `H` before L or # in the day of week: a weekday 0-6. */
export const hashedWeekday = (seed: string, field: string): number => pick(seed, field, 7);
