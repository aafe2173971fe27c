/**
 * Time-zone arithmetic on Intl alone (no tz database of our own): the offset of
 * a zone at an instant, and the instants a local wall-clock reading maps to.
 * A "reading" is a local date and time stored as if it were UTC milliseconds.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

const formatter = (zone: string): Intl.DateTimeFormat => {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
};

/** True when the runtime knows the IANA zone. */
export const isKnownZone = (zone: string): boolean => {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
};

/**
 * The zone as the user named it, in the runtime's spelling where only the case differs ("utc" → "UTC").
 * The runtime's own name is not used otherwise: ICU reports some zones under names IANA retired
 * ("Asia/Kolkata" as "Asia/Calcutta", "Europe/Kyiv" as "Europe/Kiev"), which the user never wrote.
 */
export const canonicalZone = (zone: string): string => {
  const resolved = formatter(zone).resolvedOptions().timeZone;
  return resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
};

/** The local reading of an instant (whole seconds). */
export const readingAt = (instantMs: number, zone: string): number => {
  const t = Math.floor(instantMs / 1000) * 1000;
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(t))) if (p.type !== "literal") parts[p.type] = Number(p.value);
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
};

/** Offset (local minus UTC) in milliseconds at an instant. */
export const offsetAt = (instantMs: number, zone: string): number => {
  const t = Math.floor(instantMs / 1000) * 1000;
  return readingAt(t, zone) - t;
};

const DAY = 86_400_000;

export type Resolution =
  | { kind: "single"; instant: number }
  /** The reading happens twice (clocks went back): both instants, earlier first. */
  | { kind: "repeated"; first: number; second: number }
  /** The reading never happens (clocks went forward); `shifted` is it read with the offset from before the jump. */
  | { kind: "skipped"; shifted: number };

/** Which real instants show this local reading. Assumes at most one offset change within a day of it. */
export const resolveReading = (reading: number, zone: string): Resolution => {
  const before = offsetAt(reading - DAY, zone);
  const after = offsetAt(reading + DAY, zone);
  const valid = [...new Set([before, after])]
    .map((o) => reading - o)
    .filter((t) => readingAt(t, zone) === reading)
    .sort((a, b) => a - b);
  if (valid.length === 2) return { kind: "repeated", first: valid[0]!, second: valid[1]! };
  if (valid.length === 1) return { kind: "single", instant: valid[0]! };
  return { kind: "skipped", shifted: reading - before };
};

/** Offsets a zone takes: at most ±14 h, so a reading's instants lie within this of it. */
const MAX_OFFSET = 14 * 3_600_000;
const SPAN = 2 * DAY;

/**
 * A zone's offsets over four days, from one binary search for the offset change in them (about 20
 * Intl calls), so that the readings of a dense schedule near a change (an every-second cron scans
 * about 22,000 of them) resolve by arithmetic instead of four Intl calls each. Like resolveReading,
 * it assumes at most one change in that time; where it finds otherwise, there is no window.
 */
export class ZoneWindow {
  private constructor(
    private readonly lo: number,
    private readonly hi: number,
    private readonly offLo: number,
    private readonly offHi: number,
    /** The first instant at the later offset (Infinity: none in the window). */
    private readonly change: number,
  ) {}

  static around(instant: number, zone: string): ZoneWindow | undefined {
    const lo = Math.floor((instant - SPAN) / 1000) * 1000;
    const hi = lo + 2 * SPAN;
    const offLo = offsetAt(lo, zone);
    const offHi = offsetAt(hi, zone);
    if (offLo === offHi) return offsetAt(lo + SPAN, zone) === offLo ? new ZoneWindow(lo, hi, offLo, offHi, Number.POSITIVE_INFINITY) : undefined;
    let [a, b] = [lo, hi];
    while (b - a > 1000) {
      const m = a + Math.floor((b - a) / 2000) * 1000;
      const off = offsetAt(m, zone);
      if (off === offLo) a = m;
      else if (off === offHi) b = m;
      else return undefined;
    }
    return new ZoneWindow(lo, hi, offLo, offHi, b);
  }

  /** Whether the window answers for this reading (every instant resolving it looks at lies inside). */
  covers(reading: number): boolean {
    return reading - DAY - MAX_OFFSET >= this.lo && reading + DAY + MAX_OFFSET < this.hi;
  }

  private offsetAt(instant: number): number {
    return Math.floor(instant / 1000) * 1000 < this.change ? this.offLo : this.offHi;
  }

  /** resolveReading, by arithmetic: the same answer for a covered reading. */
  resolve(reading: number): Resolution {
    const before = this.offsetAt(reading - DAY);
    const after = this.offsetAt(reading + DAY);
    const valid = (before === after ? [before] : [before, after])
      .map((o) => reading - o)
      .filter((t) => t + this.offsetAt(t) === reading)
      .sort((x, y) => x - y);
    if (valid.length === 2) return { kind: "repeated", first: valid[0]!, second: valid[1]! };
    if (valid.length === 1) return { kind: "single", instant: valid[0]! };
    return { kind: "skipped", shifted: reading - before };
  }
}
