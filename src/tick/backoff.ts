import type { BackoffOptions } from "../job.js";

/**
 * Exponential backoff with "equal jitter": half the delay is fixed, half random,
 * so retries of jobs that failed together spread out but never retry at once.
 */
export const backoffMs = (attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number => {
  const base = options.baseMs ?? 5_000;
  const max = options.maxMs ?? 3_600_000;
  const factor = options.factor ?? 2;
  // 0 × Infinity (a base of 0, a factor grown past a double) is NaN: such a delay is 0.
  const exp = base === 0 ? 0 : Math.min(max, base * factor ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
};
