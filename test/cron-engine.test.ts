// pgtick's cron engine on its own: what each piece of syntax parses to, the errors, and
// next / previous readings for L, #, H, steps, the day rule, year ends and leap years.
// Readings are local dates and times stored as UTC milliseconds (no zone here); the last
// block goes through defineSchedule, in UTC.
import { describe, expect, it } from "vitest";
import { defineSchedule, JobsError } from "../src/index.js";
import { CronSyntaxError, parseCron } from "../src/schedules/cron-fields.js";
import { hash32 } from "../src/schedules/cron-hash.js";
import { CronMatcher, type DayMatch } from "../src/schedules/cron-match.js";

const at = (iso: string) => Date.parse(`${iso}Z`);
const iso = (t: number) => new Date(t).toISOString().slice(0, 19);
const isos = (ts: number[]) => ts.map((t) => new Date(t).toISOString());
const range = (lo: number, hi: number, step = 1) => Array.from({ length: Math.floor((hi - lo) / step) + 1 }, (_, i) => lo + i * step);
const matcher = (cron: string, dayMatch: DayMatch = "or", seed = "s") => new CronMatcher(parseCron(cron, seed), dayMatch);
const nexts = (cron: string, from: string, n = 3, dayMatch: DayMatch = "or") => {
  const m = matcher(cron, dayMatch);
  const out: string[] = [];
  for (let t = at(from), i = 0; i < n; i++) out.push(iso((t = m.next(t))));
  return out;
};
const prevs = (cron: string, from: string, n = 3, dayMatch: DayMatch = "or") => {
  const m = matcher(cron, dayMatch);
  const out: string[] = [];
  for (let t = at(from), i = 0; i < n; i++) out.push(iso((t = m.prev(t))));
  return out;
};
const refusal = (cron: string, dayMatch: DayMatch = "or"): string => {
  try {
    matcher(cron, dayMatch);
  } catch (e) {
    expect(e).toBeInstanceOf(CronSyntaxError);
    return (e as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(cron)} to be refused`);
};

describe("parsing", () => {
  it("reads values, lists, ranges and steps in every field", () => {
    const f = parseCron("*/20 5,10 8-11 1-31/10 3/4 1-5/2", "s");
    expect([f.second, f.minute, f.hour, f.dayOfMonth.days, f.month, f.dayOfWeek.days]).toEqual([
      [0, 20, 40], [5, 10], [8, 9, 10, 11], [1, 11, 21, 31], [3, 7, 11], [1, 3, 5],
    ]);
    // Five fields: seconds are 0. `?` is `*` in a day field. Leading zeros are fine; a step wider than the field leaves its start.
    const g = parseCron("007 * ? */61 ?", "s");
    expect([g.second, g.minute, g.hour.length, g.dayOfMonth.any, g.month, g.dayOfWeek.any]).toEqual([[0], [7], 24, true, [1], true]);
    // Elsewhere it is refused: EventBridge's "daily at 09:00" (a year last) read as six fields was every hour at minute 9.
    expect(() => parseCron("0 9 * * ? *", "s")).toThrow(/month field "\?": "\?" is for the day fields only/);
    for (const cron of ["? * * * *", "0 ? * * *", "0 0 * ? *", "0 0 * */2,? *"]) expect(() => parseCron(cron, "s"), cron).toThrow(/is for the day fields only/);
    expect(parseCron("*/2,*/3 * * * *", "s").minute).toEqual([...new Set([...range(0, 58, 2), ...range(0, 57, 3)])].sort((a, b) => a - b));
  });

  it("reads month and weekday names in any case, and weekday 7 as Sunday", () => {
    const f = parseCron("0 0 * jan,Mar-MAY,feb-dec/5 *", "s");
    expect(f.month).toEqual([1, 2, 3, 4, 5, 7, 12]);
    expect(parseCron("0 0 * * sun,Wed-FRI", "s").dayOfWeek.days).toEqual([0, 3, 4, 5]);
    expect(parseCron("0 0 * * 7", "s").dayOfWeek.days).toEqual([0]);
    expect(parseCron("0 0 * * 0-7", "s").dayOfWeek.days).toEqual(range(0, 6));
    expect(parseCron("0 0 * * 5-7", "s").dayOfWeek.days).toEqual([0, 5, 6]);
    // A list naming a value twice is read as the union (cron-parser refuses it).
    expect(parseCron("0 0 * * 0,7,sun", "s").dayOfWeek.days).toEqual([0]);
  });

  it("reads L, nL and n#k", () => {
    expect(parseCron("0 0 L,15 * *", "s").dayOfMonth).toEqual({ days: [15], last: true, any: false });
    expect(parseCron("0 0 * * 5L,FRIL,1,7L", "s").dayOfWeek).toEqual({ days: [1], last: [0, 5], any: false });
    expect(parseCron("0 0 * * mon#2", "s").dayOfWeek).toEqual({ days: [], last: [], nth: { days: [1], week: 2 }, any: false });
    expect(parseCron("0 0 * * *#5", "s").dayOfWeek.nth).toEqual({ days: range(0, 6), week: 5 });
  });

  it("expands the aliases", () => {
    const source = (cron: string) => parseCron(cron, "s").source.join(" ");
    expect(Object.fromEntries(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@minutely", "@secondly", "@weekdays", "@weekends"].map((a) => [a, source(a)]))).toEqual({
      "@yearly": "0 0 0 1 1 *",
      "@annually": "0 0 0 1 1 *",
      "@monthly": "0 0 0 1 * *",
      "@weekly": "0 0 0 * * 0",
      "@daily": "0 0 0 * * *",
      "@midnight": "0 0 0 * * *",
      "@hourly": "0 0 * * * *",
      "@minutely": "0 * * * * *",
      "@secondly": "* * * * * *",
      "@weekdays": "0 0 0 * * 1-5",
      "@weekends": "0 0 0 * * 0,6",
    });
  });

  it("refuses bad fields with a message naming the field and what is wrong", () => {
    const cases: [string, string][] = [
      ["61 * * * *", 'minute field "61": 61 is out of range 0-59'],
      ["* 24 * * *", 'hour field "24": 24 is out of range 0-23'],
      ["* * 0 * *", 'day-of-month field "0": 0 is out of range 1-31'],
      ["* * * 13 *", 'month field "13": 13 is out of range 1-12'],
      ["* * * * 8", 'day-of-week field "8": 8 is out of range 0-7'],
      ["60 * * * * *", 'second field "60": 60 is out of range 0-59'],
      ["5-1 * * * *", 'minute field "5-1": the range runs backwards (5 > 1)'],
      ["* * * * 6-0", 'day-of-week field "6-0": the range runs backwards (6 > 0)'],
      ["*/0 * * * *", 'minute field "*/0": the step after "/" must be a whole number from 1 up, not "0"'],
      ["*/2/3 * * * *", 'minute field "*/2/3": only one "/" is allowed'],
      ["1,,2 * * * *", 'minute field "1,,2": a list has a value between each pair of commas'],
      ["-5 * * * *", 'minute field "-5": a value is missing'],
      ["x * * * *", 'minute field "x": "x" is not a number'],
      ["jan * * * *", 'minute field "jan": "jan" is not a number'],
      ["* * * January *", 'month field "January": "January" is not a number or a name (JAN-DEC)'],
      ["L * * * *", 'minute field "L": "L" is not a number'],
      ["0 0 15W * *", 'day-of-month field "15W": W (nearest weekday) is not supported'],
      ["0 0 L-2 * *", 'day-of-month field "L-2": L (the last day) stands alone, without offset, range or step'],
      ["0 0 * * L", 'day-of-week field "L": L follows a single weekday, as in 5L (the last Friday)'],
      ["0 0 * * 1-5L", 'day-of-week field "1-5L": L follows a single weekday, as in 5L (the last Friday)'],
      ["0 0 * * 1#6", 'day-of-week field "1#6": the week after # is 1-5, not 6'],
      ["0 0 * * 1#1,5", 'day-of-week field "1#1,5": # stands alone, after a single weekday, as in 1#2 (the second Monday)'],
      ["0 0 * * 1-3#2", 'day-of-week field "1-3#2": # stands alone, after a single weekday, as in 1#2 (the second Monday)'],
      ["H(5-1) * * * *", 'minute field "H(5-1)": the range runs backwards (5 > 1)'],
      ["0 0 H(0-0) * *", 'day-of-month field "H(0-0)": no value of the range lies in 1-31'],
      ["H-5 * * * *", 'minute field "H-5": H takes the forms H, H(a-b), H/n and H(a-b)/n'],
      ["* * * *", "expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 4"],
      ["* * * * * * *", "expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), got 7"],
      ["@reboot", 'unknown alias "@reboot"; known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @minutely, @secondly, @weekdays, @weekends'],
    ];
    expect(cases.map(([cron]) => [cron, refusal(cron)])).toEqual(cases);
  });

  it("reaches defineSchedule as invalid_schedule, naming the schedule and the field", () => {
    try {
      defineSchedule({ name: "nightly", cron: "0 25 * * *", job: "j", payload: {} });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(JobsError);
      expect((e as JobsError).code).toBe("invalid_schedule");
      expect((e as JobsError).message).toBe('schedule "nightly": invalid cron expression "0 25 * * *": hour field "25": 25 is out of range 0-23');
    }
  });
});

describe("H", () => {
  const minutes = (cron: string, seed: string) => parseCron(cron, seed).minute;

  it("is the same for one seed in every process: a pinned hash and a pinned pick", () => {
    // Changing either moves every H schedule of every deployment: change them only on purpose.
    expect([hash32(""), hash32("minute\nnightly-report")]).toEqual([2872998923, 2827827996]);
    expect(parseCron("H H * * *", "nightly-report").source).toEqual(["0", "H", "H", "*", "*", "*"]);
    expect([minutes("H * * * *", "nightly-report"), parseCron("H H * * *", "nightly-report").hour]).toEqual([[36], [5]]);
  });

  it("spreads schedules over the field, hour and minute apart", () => {
    const names = Array.from({ length: 300 }, (_, i) => `job-${i}`);
    const picks = names.map((n) => parseCron("H H * * *", n));
    expect(new Set(picks.map((p) => p.minute[0])).size).toBeGreaterThan(50);
    expect(new Set(picks.map((p) => p.hour[0])).size).toBe(24);
    expect(picks.filter((p) => p.minute[0] === p.hour[0]).length).toBeLessThan(30);
    // A bare H in the day of month stays within 1-28, so it falls in every month.
    expect(Math.max(...names.map((n) => parseCron("0 0 H * *", n).dayOfMonth.days[0]!))).toBeLessThanOrEqual(28);
  });

  it("reads ranges, steps and the weekday forms", () => {
    for (const seed of ["a", "b", "c", "d"]) {
      const [h] = minutes("H(10-20) * * * *", seed);
      expect(h).toBeGreaterThanOrEqual(10);
      expect(h).toBeLessThanOrEqual(20);
      // H/15: a start below 15, then every 15 minutes.
      const q = minutes("H/15 * * * *", seed);
      expect(q).toEqual(range(q[0]!, 59, 15));
      expect(q[0]).toBeLessThan(15);
      // With a step the day of month runs to 31, as */10 does; a bare H stays in 1-28.
      const days = parseCron("0 0 H/10 * *", seed).dayOfMonth.days;
      expect(days).toEqual(range(days[0]!, 31, 10));
      const r = minutes("H(0-29)/10 * * * *", seed);
      expect(r).toEqual(range(r[0]!, 29, 10));
      // A step wider than the range leaves one value; a range is narrowed to the field.
      expect(minutes("H(1-5)/10 * * * *", seed)).toHaveLength(1);
      expect(parseCron("0 0 H(0-3) * *", seed).dayOfMonth.days[0]).toBeGreaterThanOrEqual(1);
      const w = parseCron("0 0 * * HL", seed).dayOfWeek;
      expect(parseCron("0 0 * * H#3", seed).dayOfWeek.nth).toEqual({ days: w.last, week: 3 });
    }
  });
});

describe("next and previous readings", () => {
  it("steps second by second across a day, a month and a year end, both ways", () => {
    expect(nexts("* * * * * *", "2024-12-31T23:59:58")).toEqual(["2024-12-31T23:59:59", "2025-01-01T00:00:00", "2025-01-01T00:00:01"]);
    expect(prevs("* * * * * *", "2025-01-01T00:00:01")).toEqual(["2025-01-01T00:00:00", "2024-12-31T23:59:59", "2024-12-31T23:59:58"]);
    expect(nexts("*/20 59 23 31 12 *", "2024-12-31T23:59:20")).toEqual(["2024-12-31T23:59:40", "2025-12-31T23:59:00", "2025-12-31T23:59:20"]);
    expect(prevs("0 0 1 1 *", "2024-01-01T00:00:00", 2)).toEqual(["2023-01-01T00:00:00", "2022-01-01T00:00:00"]);
  });

  it("L: the last day of each month, 29 February in leap years", () => {
    expect(nexts("0 12 L * *", "2024-01-31T12:00:00", 4)).toEqual(["2024-02-29T12:00:00", "2024-03-31T12:00:00", "2024-04-30T12:00:00", "2024-05-31T12:00:00"]);
    expect(prevs("0 0 L 2 *", "2024-02-29T00:00:00", 2)).toEqual(["2023-02-28T00:00:00", "2022-02-28T00:00:00"]);
  });

  it("29 February: leap years only, none in 2100", () => {
    expect(nexts("0 0 29 2 *", "2096-03-01T00:00:00", 2)).toEqual(["2104-02-29T00:00:00", "2108-02-29T00:00:00"]);
    expect(prevs("0 0 29 2 *", "2104-01-01T00:00:00", 1)).toEqual(["2096-02-29T00:00:00"]);
  });

  it("nL and n#k: the last Friday, the second Monday, the fifth Sunday, days 8-14", () => {
    expect(nexts("0 0 * * 5L", "2024-01-01T00:00:00")).toEqual(["2024-01-26T00:00:00", "2024-02-23T00:00:00", "2024-03-29T00:00:00"]);
    expect(nexts("0 0 * * 1#2", "2024-01-01T00:00:00")).toEqual(["2024-01-08T00:00:00", "2024-02-12T00:00:00", "2024-03-11T00:00:00"]);
    expect(nexts("0 0 * * 0#5", "2024-01-01T00:00:00")).toEqual(["2024-03-31T00:00:00", "2024-06-30T00:00:00", "2024-09-29T00:00:00"]);
    expect(prevs("0 0 * * 1#2", "2024-01-08T00:00:00", 1)).toEqual(["2023-12-11T00:00:00"]);
    expect(nexts("0 0 * * *#2", "2024-01-13T00:00:00")).toEqual(["2024-01-14T00:00:00", "2024-02-08T00:00:00", "2024-02-09T00:00:00"]);
  });

  it('"or" and "and" when both day fields are restricted; `*` or `?` leaves the other field to decide', () => {
    // Friday or the 13th, then Friday the 13th.
    expect(nexts("0 0 13 * 5", "2024-09-01T00:00:00", 4)).toEqual(["2024-09-06T00:00:00", "2024-09-13T00:00:00", "2024-09-20T00:00:00", "2024-09-27T00:00:00"]);
    expect(nexts("0 0 13 * 5", "2024-01-01T00:00:00", 3, "and")).toEqual(["2024-09-13T00:00:00", "2024-12-13T00:00:00", "2025-06-13T00:00:00"]);
    expect(prevs("0 0 13 * 5", "2024-09-13T00:00:00", 2, "and")).toEqual(["2023-10-13T00:00:00", "2023-01-13T00:00:00"]);
    // Every day of the month is not a wildcard: under "or" it runs daily, under "and" on Mondays.
    expect(nexts("0 0 1-31 * 1", "2024-01-01T00:00:00")).toEqual(["2024-01-02T00:00:00", "2024-01-03T00:00:00", "2024-01-04T00:00:00"]);
    expect(nexts("0 0 1-31 * 1", "2024-01-01T00:00:00", 2, "and")).toEqual(["2024-01-08T00:00:00", "2024-01-15T00:00:00"]);
    expect(nexts("0 0 ? * 1", "2024-01-01T00:00:00", 2)).toEqual(["2024-01-08T00:00:00", "2024-01-15T00:00:00"]);
    expect(nexts("0 0 L * ?", "2024-01-01T00:00:00", 2, "and")).toEqual(["2024-01-31T00:00:00", "2024-02-29T00:00:00"]);
  });

  it('finds the sparsest "and" dates: 29 February on a Monday, 40 years apart across 2100', () => {
    expect(nexts("0 0 29 2 1", "2016-03-01T00:00:00", 3, "and")).toEqual(["2044-02-29T00:00:00", "2072-02-29T00:00:00", "2112-02-29T00:00:00"]);
    expect(prevs("0 0 29 2 1", "2112-02-29T00:00:00", 2, "and")).toEqual(["2072-02-29T00:00:00", "2044-02-29T00:00:00"]);
  });

  it("answers strictly after and strictly before, and matches() agrees", () => {
    const m = matcher("30 15 10 * * *");
    expect(iso(m.next(at("2024-05-05T10:15:30")))).toBe("2024-05-06T10:15:30");
    expect(iso(m.next(at("2024-05-05T10:15:29.5")))).toBe("2024-05-05T10:15:30");
    expect(iso(m.prev(at("2024-05-05T10:15:30")))).toBe("2024-05-04T10:15:30");
    expect(iso(m.prev(at("2024-05-05T10:15:30.5")))).toBe("2024-05-05T10:15:30");
    expect([m.matches(at("2024-05-05T10:15:30")), m.matches(at("2024-05-05T10:15:31")), m.matches(at("2024-05-05T10:15:30.5"))]).toEqual([true, false, false]);
  });
});

describe("expressions that can never match", () => {
  it("are refused when built, with the reason", () => {
    expect(refusal("0 0 30 2 *")).toBe("the day of month must occur in the months given: February has no day 30");
    expect(refusal("0 0 31 4,6 *")).toBe("the day of month must occur in the months given: April and June have no day 31");
    expect(refusal("0 0 30,31 2 *")).toBe("the day of month must occur in the months given: February has no day 30 or 31");
    expect(refusal("0 0 30 2 1", "and")).toBe("the day of month must occur in the months given: February has no day 30");
    // Days 1 and 21 are never a fifth Monday; day 1 is never in the last week.
    expect(refusal("0 0 */20 * 1#5", "and")).toBe("it has no occurrence: no date matches both day fields (day of month and day of week)");
    expect(refusal("0 0 1 * 1L", "and")).toMatch(/no occurrence/);
  });

  it("are told from the rare ones that do match", () => {
    // Under "or" the weekday makes up for 30 February; 31 March and L exist.
    expect(nexts("0 0 30 2 1", "2024-01-01T00:00:00", 1)).toEqual(["2024-02-05T00:00:00"]);
    expect(nexts("0 0 31 2,3 *", "2024-01-01T00:00:00", 1)).toEqual(["2024-03-31T00:00:00"]);
    expect(nexts("0 0 L 2 1#5", "2024-03-01T00:00:00", 1, "and")).toEqual(["2044-02-29T00:00:00"]);
    expect(nexts("0 0 * 2 1#5", "2024-03-01T00:00:00", 1)).toEqual(["2044-02-29T00:00:00"]);
  });
});

describe("pgtick's own cron engine, through defineSchedule", () => {
  const define = (cron: string, extra: { name?: string; dayMatch?: "or" | "and" } = {}) => defineSchedule({ name: "e", cron, job: "j", payload: {}, ...extra });

  it("names the field and the problem in a refused expression", () => {
    expect(() => define("0 25 * * *")).toThrow('schedule "e": invalid cron expression "0 25 * * *": hour field "25": 25 is out of range 0-23');
    expect(() => define("0 0 * * 1#6")).toThrow('day-of-week field "1#6": the week after # is 1-5, not 6');
    expect(() => define("0 0 31 4,6 *")).toThrow("the day of month must occur in the months given: April and June have no day 31");
  });

  it("accepts @midnight, an alias of @daily", () => {
    expect(isos(define("@midnight").rule.take(2, at("2024-01-01T12:00:00")))).toEqual(["2024-01-02T00:00:00.000Z", "2024-01-03T00:00:00.000Z"]);
  });

  it("exposes plain field values, and picks the same H minute for a name everywhere", () => {
    const f = define("H 9 * * 1-5", { name: "nightly-report" }).rule.fields;
    expect({ minute: f.minute, hour: f.hour, dayOfWeek: f.dayOfWeek.days, anyDay: f.dayOfMonth.any }).toEqual({ minute: [36], hour: [9], dayOfWeek: [1, 2, 3, 4, 5], anyDay: true });
  });

  it("describes days by the fields as written: a day-of-month list of every day runs daily under \"or\"", () => {
    expect(define("0 0 1-31 * 1").description).toBe("every day at 00:00 (UTC)");
    expect(define("0 0 * 2 *").description).toBe("at 00:00 in February (UTC)");
  });

  it('finds 29 February on a Monday under "and", 40 years apart across 2100, both ways', () => {
    const r = define("0 0 29 2 1", { dayMatch: "and" }).rule;
    expect(isos(r.take(3, at("2016-03-01T00:00:00")))).toEqual(["2044-02-29T00:00:00.000Z", "2072-02-29T00:00:00.000Z", "2112-02-29T00:00:00.000Z"]);
    expect(isos([r.latestAtOrBefore(at("2112-02-28T00:00:00"), 0)!])).toEqual(["2072-02-29T00:00:00.000Z"]);
  });
});
