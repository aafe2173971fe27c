import { CronExpression, CronExpressionParser, CronFieldCollection } from "cron-parser";
import { offsetAt, readingAt, resolveReading } from "./zone.js";

/**
 * How the day-of-month and day-of-week fields combine when both are restricted (neither is
 * `*`): "or" fires on a day matching either (POSIX, and cron-parser, whatever the fields
 * start with); "and" only on a day matching both (Vixie cron's reading when one of them
 * starts with `*`, as in `*∕2`).
 */
export type DayMatch = "or" | "and";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** How far "and" looks for a day matching both fields before calling the expression impossible. */
const AND_HORIZON = 100 * 366 * DAY;
/** Larger than any offset change a zone makes at once (Lord Howe 30 min, most 1 h, Troll 2 h). */
const MARGIN = 3 * HOUR;
/** Readings looked at for one answer; a near-transition search over an every-second cron needs ~22k. */
const LIMIT = 100_000;

/**
 * A cron expression in a time zone, with the DST rules this library documents:
 *
 * - Interval-like schedules (the hour field matches every hour, e.g. `0 * * * *`,
 *   `*∕15 * * * *`) follow real time: they fire at every instant whose local
 *   reading matches, so a reading the clock skips never fires and a reading the
 *   clock repeats fires at both passes (every real hour is covered).
 * - Fixed-time schedules (any narrower hour field, e.g. `30 2 * * *`) fire once
 *   per matching reading: a skipped reading fires at the instant it would have
 *   had without the jump (02:30 → 03:30 EDT), a repeated one at its first pass.
 *
 * Matching itself (day of month, L, #, H, ...) is cron-parser's, applied to
 * local readings; the zone mapping is ours, from Intl. With `dayMatch: "and"` a reading
 * also needs its day to match each restricted day field on its own.
 */
export class CronRule {
  /** Hour field matches all 24 hours. */
  readonly intervalLike: boolean;
  readonly fields: CronExpression["fields"];
  /** Neither day field is `*` (or `?`): cron-parser then fires on days matching either. */
  readonly bothDaysRestricted: boolean;
  /** Both restricted and one starts with `*` (`*∕2`): where Vixie cron would need both to match. */
  readonly vixieWouldNeedBoth: boolean;
  /** Under "and" with both days restricted: each day field alone, to test a day against both. */
  private readonly dayTests: readonly CronExpression[] | undefined;

  constructor(
    readonly expression: string,
    readonly zone: string,
    /** Seeds `H` fields, so every deployment picks the same minute for one schedule. */
    readonly seed: string,
    readonly dayMatch: DayMatch = "or",
  ) {
    const parsed = this.iterator(0);
    this.fields = parsed.fields;
    this.intervalLike = parsed.fields.hour.values.length === 24;
    this.bothDaysRestricted = !parsed.fields.dayOfMonth.isWildcard && !parsed.fields.dayOfWeek.isWildcard;
    const parts = expression.trim().split(/\s+/);
    const days = parts.length === 6 ? parts.slice(3) : parts.slice(2);
    this.vixieWouldNeedBoth = this.bothDaysRestricted && [days[0], days[2]].some((f) => f?.startsWith("*"));
    this.dayTests = dayMatch === "and" && this.bothDaysRestricted ? dayTests(parsed.fields) : undefined;
  }

  /** Whether a reading's day passes the day rule beyond what cron-parser checked (only "and" adds one). */
  private dayAllowed(reading: number): boolean {
    return this.dayTests === undefined || this.dayTests.every((e) => e.includesDate(new Date(reading)));
  }

  /**
   * The matching readings from `start`, forward or backward. A day the "and" rule refuses is
   * skipped whole (the iterator restarts past it), so the cost is per day, not per reading.
   */
  private *readings(start: number, forward: boolean): Generator<number> {
    let it = this.iterator(start);
    for (;;) {
      if (!forward && !it.hasPrev()) return;
      const reading = (forward ? it.next() : it.prev()).getTime();
      if (this.dayAllowed(reading)) {
        yield reading;
        continue;
      }
      const day = reading - (((reading % DAY) + DAY) % DAY);
      if (Math.abs(day - start) > AND_HORIZON) return;
      // The iterator answers strictly after (before) its start: the last second of the day, or its first.
      it = this.iterator(forward ? day + DAY - 1000 : day);
    }
  }

  private iterator(readingMs: number): CronExpression {
    return CronExpressionParser.parse(this.expression, { tz: "UTC", currentDate: new Date(readingMs), hashSeed: this.seed, strict: false });
  }

  /** The instants at which a matching local reading fires (0, 1 or 2 of them). */
  instantsOf(reading: number): number[] {
    const r = resolveReading(reading, this.zone);
    if (r.kind === "single") return [r.instant];
    if (r.kind === "repeated") return this.intervalLike ? [r.first, r.second] : [r.first];
    return this.intervalLike ? [] : [r.shifted];
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
      for (const instant of this.instantsOf(reading)) {
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
      for (const instant of this.instantsOf(reading)) {
        if (instant <= t && (best === undefined || instant > best)) {
          best = instant;
          bestReading = reading;
        }
      }
      if (best !== undefined && bestReading === reading && this.stable(best)) break;
    }
    return best !== undefined && best >= floor ? best : undefined;
  }

  /** The next `count` occurrences strictly after `t`. */
  take(count: number, t: number): number[] {
    const out: number[] = [];
    let at = t;
    for (let i = 0; i < count; i++) {
      at = this.nextAfter(at);
      out.push(at);
    }
    return out;
  }
}

/** The two day fields as expressions of their own (the other day field `*`), both read in UTC like the readings. */
const dayTests = (fields: CronExpression["fields"]): CronExpression[] => {
  const any = CronExpressionParser.parse("* * * * *").fields;
  try {
    return [
      new CronExpression(CronFieldCollection.from(fields, { dayOfWeek: any.dayOfWeek }), { tz: "UTC" }),
      new CronExpression(CronFieldCollection.from(fields, { dayOfMonth: any.dayOfMonth }), { tz: "UTC" }),
    ];
  } catch (e) {
    // cron-parser refuses a day of month that no month given has (30 in February): under "and"
    // the day of week can no longer make up for it.
    throw new Error(`with dayMatch "and" the day of month must occur in the months given (${(e as Error).message})`);
  }
};
