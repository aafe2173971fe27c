/**
 * Which readings (local date and time stored as UTC milliseconds, whole seconds) a parsed
 * expression matches, and the next / previous one from any reading.
 *
 * Stepping costs O(1) within a day (lookup tables per time field) and O(1) per month
 * between days (a bit mask of the matching days for each kind of month). The Gregorian
 * calendar repeats every 400 years (146097 days, a whole number of weeks), and in every
 * such cycle each month starts on each weekday, February with 28 and with 29 days. So the
 * day rule is checked for being satisfiable once, over those 12 × 7 (+ 7) kinds of month,
 * and a search that starts from a satisfiable rule finds a day within 4812 months.
 */
import { CronSyntaxError, type CronFields } from "./cron-fields.js";

/**
 * How the day-of-month and day-of-week fields combine when both are restricted (neither is
 * `*` or `?`): "or" fires on a day matching either (POSIX, and cron-parser, whatever the
 * fields start with); "and" only on a day matching both (Vixie cron's reading when one of
 * them starts with `*`, as in `*∕2`). A field that is `*` or `?` leaves the other to decide.
 */
export type DayMatch = "or" | "and";

const SECOND = 1000;
const DAY = 86_400_000;
/** One 400-year cycle and a year: every kind of month occurs within it. */
const SEARCH_MONTHS = 401 * 12;
const MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const LENGTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const monthLength = (y: number, m: number) => (m === 2 && isLeap(y) ? 29 : LENGTHS[m - 1]!);
const mod = (a: number, n: number) => ((a % n) + n) % n;
/** Days since 1970-01-01 (setUTCFullYear, unlike Date.UTC, reads years 0-99 as written). */
const dayNumber = (y: number, m: number, d: number): number => {
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  return t.getTime() / DAY;
};
/** 1970-01-01 was a Thursday. */
const weekdayOf = (day: number) => mod(day + 4, 7);

/** One time field as lookup tables: the first allowed value at or above / at or below each value. */
class TimeField {
  readonly first: number;
  readonly last: number;
  private readonly allowed: Uint8Array;
  private readonly up: Int8Array;
  private readonly down: Int8Array;

  constructor(values: readonly number[], size: number) {
    this.allowed = new Uint8Array(size);
    for (const v of values) this.allowed[v] = 1;
    this.up = new Int8Array(size).fill(-1);
    this.down = new Int8Array(size).fill(-1);
    for (let v = size - 1, next = -1; v >= 0; v--) this.up[v] = next = this.allowed[v] ? v : next;
    for (let v = 0, prev = -1; v < size; v++) this.down[v] = prev = this.allowed[v] ? v : prev;
    this.first = this.up[0]!;
    this.last = this.down[size - 1]!;
  }

  has = (v: number): boolean => this.allowed[v] === 1;
  /** -1 when none. */
  atOrAbove = (v: number): number => (v >= this.up.length ? -1 : this.up[v]!);
  atOrBelow = (v: number): number => (v < 0 ? -1 : this.down[v]!);
}

export class CronMatcher {
  private readonly second: TimeField;
  private readonly minute: TimeField;
  private readonly hour: TimeField;
  private readonly months: Uint8Array;
  /** Matching days (bit d-1) of a month by kind: (length - 28) * 7 + weekday of its 1st. */
  private readonly masks: Int32Array;
  private memoDay = Number.NaN;
  private memoOk = false;

  constructor(readonly fields: CronFields, readonly dayMatch: DayMatch = "or") {
    this.second = new TimeField(fields.second, 60);
    this.minute = new TimeField(fields.minute, 60);
    this.hour = new TimeField(fields.hour, 24);
    this.months = new Uint8Array(13);
    for (const m of fields.month) this.months[m] = 1;
    this.masks = new Int32Array(28);
    for (let len = 28; len <= 31; len++) {
      for (let w = 0; w < 7; w++) {
        let mask = 0;
        for (let d = 1; d <= len; d++) if (this.dayMatches(d, len, (w + d - 1) % 7)) mask |= 1 << (d - 1);
        this.masks[(len - 28) * 7 + w] = mask;
      }
    }
    if (!this.satisfiable((k) => this.masks[k] !== 0)) throw new CronSyntaxError(this.impossible());
  }

  private dayMatches(d: number, len: number, weekday: number): boolean {
    const { dayOfMonth: dom, dayOfWeek: dow } = this.fields;
    const domOk = dom.days.includes(d) || (dom.last && d === len);
    const dowOk =
      dow.days.includes(weekday) ||
      (dow.last.includes(weekday) && d + 7 > len) ||
      (dow.nth !== undefined && dow.nth.days.includes(weekday) && Math.ceil(d / 7) === dow.nth.week);
    if (dom.any) return dow.any || dowOk;
    if (dow.any) return domOk;
    return this.dayMatch === "and" ? domOk && dowOk : domOk || dowOk;
  }

  /** Whether some month allowed by the month field, of some kind that month can be, passes `test`. */
  private satisfiable(test: (kind: number, month: number) => boolean): boolean {
    for (const m of this.fields.month) {
      for (const len of m === 2 ? [28, 29] : [LENGTHS[m - 1]!]) {
        for (let w = 0; w < 7; w++) if (test((len - 28) * 7 + w, m)) return true;
      }
    }
    return false;
  }

  /** Why no day ever matches. */
  private impossible(): string {
    const { dayOfMonth: dom, dayOfWeek: dow, month } = this.fields;
    if (dow.any || this.dayMatch === "and") {
      const fits = (len: number) => dom.last || dom.days.some((d) => d <= len);
      if (!this.satisfiable((kind) => fits(28 + Math.floor(kind / 7)))) {
        const names = month.map((m) => MONTH_NAMES[m - 1]!);
        const list = (xs: readonly string[], word: string) => (xs.length === 1 ? xs[0]! : `${xs.slice(0, -1).join(", ")} ${word} ${xs[xs.length - 1]}`);
        const have = names.length === 1 ? "has" : "have";
        return `the day of month must occur in the months given: ${list(names, "and")} ${have} no day ${list(dom.days.map(String), "or")}`;
      }
    }
    return `it has no occurrence: no date matches both day fields (day of month and day of week)`;
  }

  private monthMask(y: number, m: number): number {
    if (this.months[m] !== 1) return 0;
    return this.masks[(monthLength(y, m) - 28) * 7 + weekdayOf(dayNumber(y, m, 1))]!;
  }

  private dayOk(day: number): boolean {
    if (day !== this.memoDay) {
      const t = new Date(day * DAY);
      const d = t.getUTCDate();
      this.memoDay = day;
      this.memoOk = ((this.monthMask(t.getUTCFullYear(), t.getUTCMonth() + 1) >>> (d - 1)) & 1) === 1;
    }
    return this.memoOk;
  }

  /** The first matching day at or after `day` (forward) or at or before it. */
  private findDay(day: number, forward: boolean): number {
    const t = new Date(day * DAY);
    let y = t.getUTCFullYear();
    let m = t.getUTCMonth() + 1;
    let d = t.getUTCDate();
    for (let i = 0; i <= SEARCH_MONTHS; i++) {
      const mask = this.monthMask(y, m);
      // Days at or after d (bits d-1 and up), or at or before it (bits d-1 and down).
      const near = forward ? mask & (~0 << (d - 1)) : mask & (d >= 31 ? ~0 : (1 << d) - 1);
      if (near !== 0) return dayNumber(y, m, forward ? 32 - Math.clz32(near & -near) : 32 - Math.clz32(near));
      if (forward) {
        [y, m] = m === 12 ? [y + 1, 1] : [y, m + 1];
        d = 1;
      } else {
        [y, m] = m === 1 ? [y - 1, 12] : [y, m - 1];
        d = 31;
      }
    }
    // Unreachable: the constructor refused a rule no month of a 400-year cycle satisfies.
    throw new Error("cron day search exceeded one calendar cycle");
  }

  /** Seconds since midnight of the first allowed time at or after `tod`, or -1. */
  private timeAtOrAfter(tod: number): number {
    const { hour: H, minute: M, second: S } = this;
    const h = Math.floor(tod / 3600);
    const m = Math.floor(tod / 60) % 60;
    if (H.has(h)) {
      const s = M.has(m) ? S.atOrAbove(tod % 60) : -1;
      if (s >= 0) return h * 3600 + m * 60 + s;
      const m2 = M.atOrAbove(m + 1);
      if (m2 >= 0) return h * 3600 + m2 * 60 + S.first;
    }
    const h2 = H.atOrAbove(h + 1);
    return h2 < 0 ? -1 : h2 * 3600 + M.first * 60 + S.first;
  }

  /** Seconds since midnight of the last allowed time at or before `tod`, or -1. */
  private timeAtOrBefore(tod: number): number {
    const { hour: H, minute: M, second: S } = this;
    const h = Math.floor(tod / 3600);
    const m = Math.floor(tod / 60) % 60;
    if (H.has(h)) {
      const s = M.has(m) ? S.atOrBelow(tod % 60) : -1;
      if (s >= 0) return h * 3600 + m * 60 + s;
      const m2 = M.atOrBelow(m - 1);
      if (m2 >= 0) return h * 3600 + m2 * 60 + S.last;
    }
    const h2 = H.atOrBelow(h - 1);
    return h2 < 0 ? -1 : h2 * 3600 + M.last * 60 + S.last;
  }

  /** Whether a reading (whole second) matches. */
  matches(reading: number): boolean {
    const day = Math.floor(reading / DAY);
    const tod = (reading - day * DAY) / SECOND;
    return Number.isInteger(tod) && this.dayOk(day) && this.timeAtOrAfter(tod) === tod;
  }

  /** The first matching reading strictly after `reading`. */
  next(reading: number): number {
    const from = Math.floor(reading / SECOND) * SECOND + SECOND;
    const day = Math.floor(from / DAY);
    if (this.dayOk(day)) {
      const t = this.timeAtOrAfter((from - day * DAY) / SECOND);
      if (t >= 0) return day * DAY + t * SECOND;
    }
    const { hour, minute, second } = this;
    return this.findDay(day + 1, true) * DAY + (hour.first * 3600 + minute.first * 60 + second.first) * SECOND;
  }

  /** The last matching reading strictly before `reading`. */
  prev(reading: number): number {
    const from = Math.ceil(reading / SECOND) * SECOND - SECOND;
    const day = Math.floor(from / DAY);
    if (this.dayOk(day)) {
      const t = this.timeAtOrBefore((from - day * DAY) / SECOND);
      if (t >= 0) return day * DAY + t * SECOND;
    }
    const { hour, minute, second } = this;
    return this.findDay(day - 1, false) * DAY + (hour.last * 3600 + minute.last * 60 + second.last) * SECOND;
  }
}
