import { DURATION_BOUNDS } from "../../store/admin/series.js";

/**
 * The smallest 1, 2, 4, 6 or 8 times a power of ten that holds `v` (at least 1): a y-axis top a
 * person reads, whose half is a whole number too (from 2 up).
 */
export const niceMax = (v: number): number => {
  if (!(v > 1)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 4, 6, 8, 10].map((m) => m * p).find((c) => c >= v)!;
};

/** Labelled ticks of a count axis: 0, the middle (a whole number), the top. */
export const countTicks = (max: number): number[] => (Number.isInteger(max / 2) ? [0, max / 2, max] : [0, max]);

const S = 1_000;
const MIN = 60 * S;
const H = 60 * MIN;
const STEPS = [S, 2 * S, 5 * S, 10 * S, 15 * S, 30 * S, MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, H, 2 * H, 3 * H, 6 * H, 12 * H, 24 * H, 48 * H, 168 * H];

/** The top of a time axis: the first round duration that holds `ms`. */
export const niceDuration = (ms: number): number => STEPS.find((s) => s >= ms) ?? Math.ceil(ms / (24 * H)) * 24 * H;

/**
 * A `duration_hist` percentile: the upper bound of the bucket the p-th run falls in, or the
 * slowest run seen when that is lower (so the value is never more than what was measured).
 * Null without runs.
 */
export const percentile = (hist: readonly number[], maxMs: number, p: number): number | null => {
  const total = hist.reduce((n, c) => n + c, 0);
  if (total === 0) return null;
  let seen = 0;
  for (const [i, c] of hist.entries()) {
    seen += c;
    if (seen >= p * total) return Math.min(DURATION_BOUNDS[i] ?? Infinity, maxMs);
  }
  return maxMs;
};
