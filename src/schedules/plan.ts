import type { Schedule } from "./define.js";

/** How late a tick may see an occurrence and still run it under the "skip" policy. */
export const DEFAULT_GRACE_MS = 5 * 60_000;

export interface Plan {
  /** Occurrence instants (ms) to enqueue, oldest first. */
  readonly occurrences: number[];
  /** True when the policy dropped at least one due occurrence. */
  readonly skipped: boolean;
  /** The first occurrence after `now`: the schedule's new next_run_at. */
  readonly next: number;
}

/**
 * Which of a schedule's due occurrences, from `expected` (its stored next_run_at,
 * itself an occurrence) through `now`, are enqueued under its missed policy.
 */
export const planOccurrences = (s: Schedule, expected: number, now: number, graceMs: number): Plan => {
  const next = s.rule.nextAfter(now);
  const latest = s.rule.latestAtOrBefore(now, expected);
  if (latest === undefined) return { occurrences: [], skipped: false, next };
  const missed = s.missed;
  if (missed === "latest") return { occurrences: [latest], skipped: latest > expected, next };
  if (missed === "skip") {
    const onTime = now - latest <= graceMs;
    return { occurrences: onTime ? [latest] : [], skipped: !onTime || latest > expected, next };
  }
  const occurrences: number[] = [];
  for (let o: number | undefined = latest; o !== undefined && occurrences.length < missed.catchUp; o = s.rule.latestAtOrBefore(o - 1, expected)) {
    occurrences.push(o);
  }
  occurrences.reverse();
  return { occurrences, skipped: occurrences[0]! > expected, next };
};
