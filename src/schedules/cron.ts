import { type CronFields, parseCron } from "./cron-fields.js";
import { CronMatcher, type DayMatch } from "./cron-match.js";
import { offsetAt, readingAt, type Resolution, resolveReading, ZoneWindow } from "./zone.js";

export type { DayMatch } from "./cron-match.js";

/** A matching local reading (as UTC ms) that fires at some instant; `shifted` when the clock skipped it. */
export interface Firing {
  readonly reading: number;
  readonly shifted: boolean;
}

const HOUR = 3_600_000;
/** Larger than any offset change a zone makes at once (Lord Howe 30 min, most 1 h, Troll 2 h). */
const MARGIN = 3 * HOUR;
/** Readings looked at for one answer; a near-transition search over an every-second cron needs ~22k. */
const LIMIT = 100_000;
/** Readings a search resolves one by one through Intl before it takes a window of the zone's offsets. */
const DENSE_AFTER = 16;

/**
 * A cron expression in a time zone, with the DST rules this library documents:
 *
 * - Interval-like schedules (the hour field matches every hour, e.g. `0 * * * *`,
 *   `*∕15 * * * *`) follow real time: they fire at every instant whose local
 *   reading matches, so a reading the clock skips never fires and a reading the
 *   clock repeats fires at both passes (every real hour is covered).
 * - Fixed-time schedules (any narrower hour field, e.g. `30 2 * * *`) fire once
 *   per matching reading: a skipped reading fires at the instant it would have
 *   had without the jump (02:30 → 03:30 EDT), a repeated one at its first pass. Where a shifted
 *   reading lands on another reading's instant, both fire there (`firingsAt`).
 *
 * Matching (day of month, L, #, H, the day rule) is cron-fields / cron-match, applied to
 * local readings; the zone mapping is zone.ts, from Intl.
 */
export class CronRule {
  /** Hour field matches all 24 hours. */
  readonly intervalLike: boolean;
  readonly fields: CronFields;
  /** Neither day field is `*` (or `?`): days then match either field ("or") or both ("and"). */
  readonly bothDaysRestricted: boolean;
  /** Both restricted and one starts with `*` (`*∕2`): where Vixie cron would need both to match. */
  readonly vixieWouldNeedBoth: boolean;
  private readonly matcher: CronMatcher;

  /** Throws CronSyntaxError for an expression that is malformed or can never match. */
  constructor(
    readonly expression: string,
    readonly zone: string,
    /** Seeds `H` fields, so every deployment picks the same minute for one schedule. */
    readonly seed: string,
    readonly dayMatch: DayMatch = "or",
  ) {
    this.fields = parseCron(expression, seed);
    this.matcher = new CronMatcher(this.fields, dayMatch);
    this.intervalLike = this.fields.hour.length === 24;
    this.bothDaysRestricted = !this.fields.dayOfMonth.any && !this.fields.dayOfWeek.any;
    const [, , , dom, , dow] = this.fields.source;
    this.vixieWouldNeedBoth = this.bothDaysRestricted && [dom, dow].some((f) => f?.startsWith("*"));
  }

  /** The matching readings strictly after `start` (forward) or strictly before it. */
  private *readings(start: number, forward: boolean): Generator<number> {
    for (let reading = start; ; ) {
      reading = forward ? this.matcher.next(reading) : this.matcher.prev(reading);
      yield reading;
    }
  }

  /**
   * The instants at which a matching local reading fires (0, 1 or 2 of them). `dense`: the caller
   * resolves many readings close together, which a window of the zone's offsets answers cheaply.
   */
  instantsOf(reading: number, dense = false): number[] {
    const r = dense || this.window?.covers(reading) ? this.resolveDense(reading) : resolveReading(reading, this.zone);
    if (r.kind === "single") return [r.instant];
    if (r.kind === "repeated") return this.intervalLike ? [r.first, r.second] : [r.first];
    return this.intervalLike ? [] : [r.shifted];
  }

  /**
   * The matching readings that fire at `instant` (an occurrence), earliest reading first. Mostly
   * one; two where a skipped reading of a fixed-time schedule, shifted by the jump, lands on another
   * of its readings (`0 2,3 * * *` in New York: 02:00 on the spring-forward night fires at 03:00
   * EDT, as 03:00 does). Occurrences are instants (next_run_at, nextAfter), so such an instant
   * stands for both runs: whoever handles it enqueues each of them.
   */
  firingsAt(instant: number): Firing[] {
    const own = readingAt(instant, this.zone);
    // Only a fixed-time rule shifts readings, and only onto instants just after an offset change.
    if (this.intervalLike || this.stable(instant)) return [{ reading: own, shifted: false }];
    const out: Firing[] = [];
    // A skipped reading fires at itself read with the offset before the jump.
    const skipped = instant + offsetAt(instant - MARGIN, this.zone);
    if (skipped !== own && this.fires(skipped, instant)) out.push({ reading: skipped, shifted: true });
    if (this.fires(own, instant)) out.push({ reading: own, shifted: false });
    // Not an occurrence of this rule (a caller's mistake): one run, as before this existed.
    return out.length > 0 ? out : [{ reading: own, shifted: false }];
  }

  private window: ZoneWindow | undefined;

  private resolveDense(reading: number): Resolution {
    if (!this.window?.covers(reading)) this.window = ZoneWindow.around(reading, this.zone);
    return this.window?.covers(reading) ? this.window.resolve(reading) : resolveReading(reading, this.zone);
  }

  private fires(reading: number, instant: number): boolean {
    return this.matcher.matches(reading) && this.instantsOf(reading).includes(instant);
  }

  private stable(instant: number): boolean {
    return offsetAt(instant - MARGIN, this.zone) === offsetAt(instant + MARGIN, this.zone);
  }

  /** The first occurrence strictly after `t` (ms). */
  nextAfter(t: number): number {
    // Near an offset change an earlier reading can fire later (a repeated hour), so start a margin back.
    const start = readingAt(t, this.zone) - (this.stable(t) ? 0 : MARGIN);
    const it = this.readings(start, true);
    let best: number | undefined;
    let bestReading = 0;
    for (let i = 0; i < LIMIT; i++) {
      const step = it.next();
      if (step.done) break;
      const reading = step.value;
      if (best !== undefined && reading > bestReading + MARGIN) break;
      for (const instant of this.instantsOf(reading, i >= DENSE_AFTER)) {
        if (instant > t && (best === undefined || instant < best)) {
          best = instant;
          bestReading = reading;
        }
      }
      // Away from offset changes, later readings fire later: the first hit is the answer.
      if (best !== undefined && bestReading === reading && this.stable(best)) break;
    }
    if (best === undefined) throw new Error(`cron "${this.expression}" has no occurrence after ${new Date(t).toISOString()}`);
    return best;
  }

  /** The last occurrence at or before `t`, or undefined when there is none at or after `floor`. */
  latestAtOrBefore(t: number, floor: number): number | undefined {
    const start = readingAt(t, this.zone) + 1000 + (this.stable(t) ? 0 : MARGIN);
    const it = this.readings(start, false);
    let best: number | undefined;
    let bestReading = 0;
    const floorReading = readingAt(floor, this.zone) - MARGIN;
    for (let i = 0; i < LIMIT; i++) {
      const step = it.next();
      if (step.done) break;
      const reading = step.value;
      if (best !== undefined && reading < bestReading - MARGIN) break;
      if (best === undefined && reading < floorReading) break;
      for (const instant of this.instantsOf(reading, i >= DENSE_AFTER)) {
        if (instant <= t && (best === undefined || instant > best)) {
          best = instant;
          bestReading = reading;
        }
      }
      if (best !== undefined && bestReading === reading && this.stable(best)) break;
    }
    return best !== undefined && best >= floor ? best : undefined;
  }

  /** The next `count` runs strictly after `t`: an instant two readings fire at is listed twice. */
  take(count: number, t: number): number[] {
    const out: number[] = [];
    for (let at = t; out.length < count; ) {
      at = this.nextAfter(at);
      const runs = Math.min(this.firingsAt(at).length, count - out.length);
      for (let i = 0; i < runs; i++) out.push(at);
    }
    return out;
  }
}
