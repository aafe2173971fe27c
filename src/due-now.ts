/**
 * Whether an enqueue stored a new job due now: what wakes a running tick (`createJobs`) or kicks a
 * new one (the HTTP API's hook). A leaf, so the API decides it as the library does without pulling
 * in the enqueue path.
 */

/** What decides when an item is due: the enqueue options. */
export interface DueOptions {
  readonly runAt?: Date | string;
  readonly delayMs?: number;
  readonly debounce?: { readonly delayMs?: number };
}

/**
 * Whether an item asks to run now (no delay, no debounce delay, a `runAt` not in the future). A delay is
 * stored rounded to the millisecond: one under half of one is stored due now, and is due now here too.
 */
const dueNow = (item: DueOptions): boolean =>
  item.runAt !== undefined ? new Date(item.runAt).getTime() <= Date.now() : !(Math.round(item.delayMs ?? item.debounce?.delayMs ?? 0) > 0);

/** Whether an enqueue stored a job due now: a new one, or a queued one a debounce made due now (not a duplicate). */
export const storedDueNow = (items: readonly DueOptions[], results: ReadonlyArray<{ readonly deduplicated: boolean }>): boolean =>
  results.some((r, i) => !r.deduplicated && dueNow(items[i]!));
