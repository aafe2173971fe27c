// pgtick's cron engine against cron-parser (a devDependency kept for this test only), over
// seeded random expressions built from the syntax both accept, in UTC: the same
// expressions refused, the same next and previous readings. Known, deliberate differences
// (H picks its own values, a list may name a value twice) are left out of the
// generator or checked on their own in cron-engine.test.ts.
import { CronExpressionParser } from "cron-parser";
import { describe, expect, it } from "vitest";
import { parseCron } from "../src/schedules/cron-fields.js";
import { CronMatcher, type DayMatch } from "../src/schedules/cron-match.js";

type Rng = () => number;
/** xorshift32: a small seeded generator, so a failure reproduces. */
const rng = (seed: number): Rng => {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
};
const int = (r: Rng, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const chance = (r: Rng, p: number) => r() < p;

interface Field {
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  readonly nameBase?: number;
}
const SECOND: Field = { min: 0, max: 59 };
const MINUTE: Field = { min: 0, max: 59 };
const HOUR: Field = { min: 0, max: 23 };
const DOM: Field = { min: 1, max: 31 };
const MONTH: Field = { min: 1, max: 12, names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], nameBase: 1 };
const DOW: Field = { min: 0, max: 7, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"], nameBase: 0 };
/** How often a generated value is out of its field's range, a range backwards or a step 0. */
const BAD = 0.01;

const anyCase = (r: Rng, s: string) => [...s].map((c) => (chance(r, 0.5) ? c.toUpperCase() : c)).join("");
const num = (r: Rng, f: Field, lo = f.min, hi = f.max): string => {
  if (chance(r, BAD)) return String(chance(r, 0.5) || f.min === 0 ? f.max + 1 : f.min - 1);
  const n = f === DOM && chance(r, 0.2) && hi >= 28 ? int(r, Math.max(lo, 28), hi) : int(r, lo, hi);
  const name = f.names?.[n - f.nameBase!];
  return name !== undefined && chance(r, 0.25) ? anyCase(r, name) : String(n);
};
const step = (r: Rng, f: Field) => String(chance(r, BAD) ? 0 : chance(r, 0.1) ? int(r, f.max, f.max + 5) : int(r, 1, Math.ceil((f.max - f.min) / 2)));
const range = (r: Rng, f: Field, lo: number, hi: number) => {
  const a = int(r, lo, hi);
  const b = int(r, a, hi);
  return chance(r, BAD) && a < b ? `${b}-${a}` : `${num(r, f, a, a)}-${num(r, f, b, b)}`;
};
/** One list item within [lo, hi]; `last` when hi is the field's top (so `a/n`, which runs to it, fits). */
const item = (r: Rng, f: Field, lo: number, hi: number, only: boolean, last: boolean): string => {
  const k = r();
  if (k < 0.4) return num(r, f, lo, hi);
  if (k < 0.6) return range(r, f, lo, hi);
  if (k < 0.75 && only) return `*/${step(r, f)}`;
  if (k < 0.85 && last) return `${num(r, f, lo, hi)}/${step(r, f)}`;
  return `${range(r, f, lo, hi)}/${step(r, f)}`;
};
/**
 * A list of 1-3 items over disjoint parts of the field, since cron-parser refuses a value
 * named twice. Weekday 7 (Sunday again) only in a list of one.
 */
const list = (r: Rng, f: Field): string => {
  const top = f === DOW ? 6 : f.max;
  const n = int(r, 1, 3);
  const cuts = [...new Set(Array.from({ length: n - 1 }, () => int(r, f.min + 1, top)))].sort((a, b) => a - b);
  const bounds = [f.min, ...cuts, top + 1];
  const items: string[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const only = bounds.length === 2;
    items.push(item(r, f, bounds[i]!, only ? f.max : bounds[i + 1]! - 1, only, i + 2 === bounds.length));
  }
  return items.join(",");
};
const lastWeekdays = (r: Rng): string => {
  const days = [...new Set(Array.from({ length: int(r, 1, 2) }, () => int(r, 0, 6)))];
  return days.map((d) => `${num(r, DOW, d, d)}L`).join(",");
};
const field = (r: Rng, f: Field, restricted = false): string => {
  if (!restricted && chance(r, 0.35)) return "*";
  // "?" only where it means "no specific value" (a day field): elsewhere pgtick refuses it, cron-parser reads it as "*".
  if (!restricted && (f === DOM || f === DOW) && chance(r, 0.05)) return "?";
  if (f === DOM && chance(r, 0.15)) return chance(r, 0.5) ? "L" : `L,${list(r, f)}`;
  if (f === DOW) {
    if (chance(r, 0.1)) return `${chance(r, 0.2) ? "*" : num(r, f)}#${chance(r, BAD * 5) ? 6 : int(r, 1, 5)}`;
    if (chance(r, 0.15)) return chance(r, 0.5) ? lastWeekdays(r) : `${lastWeekdays(r)},${list(r, f)}`;
  }
  return list(r, f);
};
const ALIASES = ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@hourly", "@minutely", "@secondly", "@weekdays", "@weekends"];
const expression = (r: Rng): string => {
  if (chance(r, 0.02)) return ALIASES[int(r, 0, ALIASES.length - 1)]!;
  const sparse = chance(r, 0.6);
  // Mostly a few seconds and minutes, so readings are not all seconds apart.
  const time = [sparse ? String(int(r, 0, 59)) : field(r, MINUTE), field(r, HOUR)];
  const fields = [...time, field(r, DOM), field(r, MONTH), field(r, DOW)];
  return chance(r, 0.4) ? [sparse ? "0" : field(r, SECOND), ...fields].join(" ") : fields.join(" ");
};

const FROM = Date.UTC(1975, 0, 1);
const TO = Date.UTC(2095, 0, 1);
const startOf = (r: Rng) => Math.floor((FROM + r() * (TO - FROM)) / 1000) * 1000;
const iso = (t: number) => new Date(t).toISOString();

/** cron-parser's answers: the error when it refuses the expression, else its next and previous readings. */
const reference = (cron: string, start: number, n: number): { next: string[]; prev: string[] } | Error => {
  try {
    const options = { tz: "UTC", currentDate: new Date(start), strict: false };
    const it = CronExpressionParser.parse(cron, options);
    const next = Array.from({ length: n }, () => iso(it.next().getTime()));
    it.reset(new Date(start));
    const prev = Array.from({ length: n }, () => iso(it.prev().getTime()));
    return { next, prev };
  } catch (e) {
    return e as Error;
  }
};

const ours = (cron: string, start: number, n: number, dayMatch: DayMatch = "or"): { next: string[]; prev: string[] } | Error => {
  let m: CronMatcher;
  try {
    m = new CronMatcher(parseCron(cron, "seed"), dayMatch);
  } catch (e) {
    return e as Error;
  }
  const walk = (step: (t: number) => number) => {
    const out: string[] = [];
    for (let t = start, i = 0; i < n; i++) out.push(iso((t = step(t))));
    return out;
  };
  return { next: walk((t) => m.next(t)), prev: walk((t) => m.prev(t)) };
};

describe("differential: pgtick's engine and cron-parser agree", () => {
  it('on 3,000 random expressions ("or" days): the same refused, the same 5 next and 5 previous readings', () => {
    const r = rng(20240229);
    let compared = 0;
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      const cron = expression(r);
      const start = startOf(r);
      const want = reference(cron, start, 5);
      const got = ours(cron, start, 5);
      // cron-parser refuses a list naming a value twice (`1,1`, `*∕2,*∕3`) before any other
      // check; pgtick reads the union (see cron-engine.test.ts), so there is nothing to compare.
      if (want instanceof Error && /duplicate values/.test(want.message)) continue;
      if (want instanceof Error || got instanceof Error) {
        const outcome = (x: typeof got) => (x instanceof Error ? `refused: ${x.message}` : x);
        expect({ cron, ours: outcome(got), cronParser: outcome(want) }).toEqual({ cron, ours: expect.stringMatching(/^refused/), cronParser: expect.stringMatching(/^refused/) });
        refused++;
        continue;
      }
      expect({ cron, start: iso(start), ...got }).toEqual({ cron, start: iso(start), ...want });
      compared++;
    }
    // The generator reaches both outcomes in numbers, so a skip cannot hide a mismatch.
    expect(compared).toBeGreaterThan(2400);
    expect(refused).toBeGreaterThan(100);
  });

  it('under "and": the readings matching both day fields are those both cron-parser halves give', () => {
    const r = rng(1313);
    let compared = 0;
    let skipped = 0;
    let impossible = 0;
    for (let i = 0; i < 100; i++) {
      const [dom, mon, dow] = [field(r, DOM, true), chance(r, 0.5) ? "*" : field(r, MONTH, true), field(r, DOW, true)];
      const time = `0 ${int(r, 0, 59)} ${int(r, 0, 23)}`;
      const start = startOf(r);
      const got = ours(`${time} ${dom} ${mon} ${dow}`, start, 5, "and");
      let domOnly: ReturnType<typeof CronExpressionParser.parse>;
      let dowOnly: ReturnType<typeof CronExpressionParser.parse>;
      try {
        const options = { tz: "UTC", currentDate: new Date(start), strict: false };
        domOnly = CronExpressionParser.parse(`${time} ${dom} ${mon} *`, options);
        dowOnly = CronExpressionParser.parse(`${time} * ${mon} ${dow}`, options);
      } catch (e) {
        if (/duplicate values/.test((e as Error).message)) {
          skipped++;
          continue;
        }
        expect({ dom, mon, dow, refused: got instanceof Error }).toEqual({ dom, mon, dow, refused: true });
        continue;
      }
      // Walk both streams forward in step: a reading in both matches both day fields.
      const both: string[] = [];
      let a = domOnly.next().getTime();
      let b = dowOnly.next().getTime();
      for (let steps = 0; both.length < 5 && steps < 250; steps++) {
        if (a === b) {
          both.push(iso(a));
          [a, b] = [domOnly.next().getTime(), dowOnly.next().getTime()];
        } else if (a < b) a = domOnly.next().getTime();
        else b = dowOnly.next().getTime();
      }
      if (got instanceof Error) {
        // Refused as impossible: the walk found nothing either.
        expect({ dom, mon, dow, both }).toEqual({ dom, mon, dow, both: [] });
        impossible++;
        continue;
      }
      expect({ dom, mon, dow, next: got.next.slice(0, both.length) }).toEqual({ dom, mon, dow, next: both });
      // Whatever the walk did not reach is past every reading it looked at.
      if (both.length < 5) expect(Date.parse(got.next[both.length]!)).toBeGreaterThanOrEqual(Math.min(a, b));
      compared++;
    }
    expect({ compared: compared > 60, skipped: skipped < 10, impossible: impossible > 0 }).toEqual({ compared: true, skipped: true, impossible: true });
  });
});
