import type { Schedule } from "./define.js";

/** How late a tick may see an occurrence and still run it under the "skip" policy. */
export const DEFAULT_GRACE_MS = 5 * 60_000;

/** One job to enqueue for an occurrence. */
export interface Run {
  /** The occurrence instant (ms): when the job is due. */
  readonly at: number;
  /**
   * Set only on a skipped reading that fires at the same instant as another reading of the schedule:
   * the reading as ISO with the offset from before the jump (`2024-03-10T02:00:00.000-05:00`, the
   * same instant as the real 03:00 EDT, `...T07:00:00.000Z`), so the two runs get keys of their own.
   */
  readonly nominal?: string;
}

export interface Plan {
  /** Occurrence instants (ms) to enqueue, oldest first, one per run: an instant two readings fire at is there twice. */
  readonly occurrences: number[];
  /** The same runs, with what keys each apart. */
  readonly runs: Run[];
  /** True when the policy dropped at least one due occurrence. */
  readonly skipped: boolean;
  /** The first occurrence after `now`: the schedule's new next_run_at. */
  readonly next: number;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** A local reading as ISO with its offset (e.g. "-05:00"), naming the instant `at`. */
const withOffset = (reading: number, at: number): string => {
  const minutes = Math.round((reading - at) / 60_000);
  const abs = Math.abs(minutes);
  return `${new Date(reading).toISOString().slice(0, -1)}${minutes < 0 ? "-" : "+"}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
};

/**
 * The runs of occurrence instants. Where a skipped reading shares its instant with a real one, the
 * real one keeps the instant's key (what every release computes) and the skipped one is keyed by
 * its reading; a skipped reading alone keeps the instant's key too.
 */
const runsOf = (s: Schedule, instants: readonly number[]): Run[] =>
  instants.flatMap((at) => {
    const firings = s.rule.firingsAt(at);
    if (firings.length === 1) return [{ at }];
    return firings.map((f) => (f.shifted ? { at, nominal: withOffset(f.reading, at) } : { at }));
  });

const plan = (s: Schedule, instants: number[], skipped: boolean, next: number): Plan => {
  const runs = runsOf(s, instants);
  return { occurrences: runs.map((r) => r.at), runs, skipped, next };
};

/**
 * Which of a schedule's due occurrences, from `expected` (its stored next_run_at,
 * itself an occurrence) through `now`, are enqueued under its missed policy. The
 * policies choose instants: the two runs of one instant are both run or both dropped,
 * and count as one occurrence for `catchUp`.
 */
export const planOccurrences = (s: Schedule, expected: number, now: number, graceMs: number): Plan => {
  const next = s.rule.nextAfter(now);
  const latest = s.rule.latestAtOrBefore(now, expected);
  if (latest === undefined) return plan(s, [], false, next);
  const missed = s.missed;
  if (missed === "latest") return plan(s, [latest], latest > expected, next);
  if (missed === "skip") {
    const onTime = now - latest <= graceMs;
    return plan(s, onTime ? [latest] : [], !onTime || latest > expected, next);
  }
  const occurrences: number[] = [];
  for (let o: number | undefined = latest; o !== undefined && occurrences.length < missed.catchUp; o = s.rule.latestAtOrBefore(o - 1, expected)) {
    occurrences.push(o);
  }
  occurrences.reverse();
  return plan(s, occurrences, occurrences[0]! > expected, next);
};
