// Pure arithmetic of schedules: DST rules, odd offsets, missed-occurrence plans, how the
// two day fields combine, validation and descriptions. The database side is in schedules.test.ts.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, defineSchedule, fromPg, JobsError, memoryLogger, type MissedPolicy, type PgLike } from "../src/index.js";
import { definitionHash } from "../src/schedules/hash.js";
import { planOccurrences } from "../src/schedules/plan.js";

const MIN = 60_000;
const at = (iso: string) => Date.parse(iso);
const isos = (xs: number[]) => xs.map((x) => new Date(x).toISOString());
const rule = (cron: string, timezone: string) => defineSchedule({ name: "t", cron, timezone, job: "j", payload: {} }).rule;
/** Every occurrence in [from, to). */
const between = (cron: string, timezone: string, from: string, to: string) => {
  const r = rule(cron, timezone);
  const out: number[] = [];
  for (let t = r.nextAfter(at(from) - 1); t < at(to); t = r.nextAfter(t)) out.push(t);
  return isos(out);
};
const gaps = (xs: string[]) => xs.slice(1).map((x, i) => (Date.parse(x) - Date.parse(xs[i]!)) / MIN);

describe("DST: America/New_York", () => {
  it("fires `0 * * * *` every real hour across spring-forward (02:00 EST → 03:00 EDT)", () => {
    const runs = between("0 * * * *", "America/New_York", "2024-03-10T04:00:00Z", "2024-03-10T10:00:00Z");
    expect(runs).toEqual(["04", "05", "06", "07", "08", "09"].map((h) => `2024-03-10T${h}:00:00.000Z`));
  });

  it("fires `0 * * * *` every real hour across fall-back, both passes of 01:00", () => {
    const runs = between("0 * * * *", "America/New_York", "2024-11-03T03:00:00Z", "2024-11-03T09:00:00Z");
    // 05:00Z is 01:00 EDT, 06:00Z is 01:00 EST.
    expect(runs).toEqual(["03", "04", "05", "06", "07", "08"].map((h) => `2024-11-03T${h}:00:00.000Z`));
  });

  it("runs a fixed time in the skipped hour once, shifted by the jump (02:30 → 03:30 EDT)", () => {
    expect(between("30 2 * * *", "America/New_York", "2024-03-09T00:00:00Z", "2024-03-12T00:00:00Z")).toEqual([
      "2024-03-09T07:30:00.000Z", // 02:30 EST
      "2024-03-10T07:30:00.000Z", // 02:30 does not exist: 03:30 EDT
      "2024-03-11T06:30:00.000Z", // 02:30 EDT
    ]);
  });

  it("runs a fixed time in the repeated hour once, at its first pass", () => {
    expect(between("30 1 * * *", "America/New_York", "2024-11-02T00:00:00Z", "2024-11-05T00:00:00Z")).toEqual([
      "2024-11-02T05:30:00.000Z",
      "2024-11-03T05:30:00.000Z", // 01:30 EDT; 01:30 EST (06:30Z) does not fire
      "2024-11-04T06:30:00.000Z",
    ]);
  });

  it("fires an every-15-minutes schedule at every real quarter hour through the repeated hour", () => {
    const runs = between("*/15 * * * *", "America/New_York", "2024-11-03T04:30:00Z", "2024-11-03T07:30:00Z");
    expect(runs).toHaveLength(12);
    expect(new Set(gaps(runs))).toEqual(new Set([15]));
  });
});

describe("DST: Europe/London", () => {
  it("fires `0 * * * *` every real hour across both transitions", () => {
    const spring = between("0 * * * *", "Europe/London", "2024-03-30T23:00:00Z", "2024-03-31T04:00:00Z");
    expect(new Set(gaps(spring))).toEqual(new Set([60]));
    expect(spring).toHaveLength(5);
    const autumn = between("0 * * * *", "Europe/London", "2024-10-26T23:00:00Z", "2024-10-27T04:00:00Z");
    expect(new Set(gaps(autumn))).toEqual(new Set([60]));
    expect(autumn).toHaveLength(5);
  });

  it("runs 01:30 once on both transition days", () => {
    // Spring: 01:30 GMT does not exist → 02:30 BST (01:30Z). Autumn: first pass, 01:30 BST (00:30Z).
    expect(between("30 1 * * *", "Europe/London", "2024-03-31T00:00:00Z", "2024-04-01T00:00:00Z")).toEqual(["2024-03-31T01:30:00.000Z"]);
    expect(between("30 1 * * *", "Europe/London", "2024-10-27T00:00:00Z", "2024-10-28T00:00:00Z")).toEqual(["2024-10-27T00:30:00.000Z"]);
  });
});

describe("odd offsets", () => {
  it("Australia/Lord_Howe (30-minute DST shift): every real half hour across both transitions", () => {
    // April 7 2024 02:00 LHDT (+11) → 01:30 LHST (+10:30): 01:30-01:59 repeats.
    const autumn = between("*/30 * * * *", "Australia/Lord_Howe", "2024-04-06T13:00:00Z", "2024-04-06T17:00:00Z");
    expect(autumn).toHaveLength(8);
    expect(new Set(gaps(autumn))).toEqual(new Set([30]));
    // October 6 2024 02:00 LHST → 02:30 LHDT: 02:00-02:29 is skipped.
    const spring = between("*/30 * * * *", "Australia/Lord_Howe", "2024-10-05T13:00:00Z", "2024-10-05T17:00:00Z");
    expect(spring).toHaveLength(8);
    expect(new Set(gaps(spring))).toEqual(new Set([30]));
  });

  it("Australia/Lord_Howe: fixed times in the skipped and repeated half hours run once", () => {
    // 02:00 does not exist on Oct 6 → 02:30 LHDT (15:30Z on Oct 5).
    expect(between("0 2 * * *", "Australia/Lord_Howe", "2024-10-05T12:00:00Z", "2024-10-06T12:00:00Z")).toEqual(["2024-10-05T15:30:00.000Z"]);
    // 01:45 happens at 14:45Z (LHDT) and 15:15Z (LHST): only the first fires.
    expect(between("45 1 * * *", "Australia/Lord_Howe", "2024-04-06T12:00:00Z", "2024-04-07T12:00:00Z")).toEqual(["2024-04-06T14:45:00.000Z"]);
  });

  it("Asia/Kathmandu (+05:45)", () => {
    expect(between("0 9 * * *", "Asia/Kathmandu", "2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z")).toEqual([
      "2024-01-01T03:15:00.000Z",
      "2024-01-02T03:15:00.000Z",
    ]);
    expect(between("0 * * * *", "Asia/Kathmandu", "2024-01-01T00:00:00Z", "2024-01-01T03:00:00Z")).toEqual([
      "2024-01-01T00:15:00.000Z",
      "2024-01-01T01:15:00.000Z",
      "2024-01-01T02:15:00.000Z",
    ]);
  });

  it("six fields: seconds", () => {
    expect(between("*/20 * * * * *", "UTC", "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z")).toEqual([
      "2024-01-01T00:00:00.000Z",
      "2024-01-01T00:00:20.000Z",
      "2024-01-01T00:00:40.000Z",
    ]);
  });

  it("finds the latest occurrence at or before a time, across the repeated hour", () => {
    const r = rule("0 * * * *", "America/New_York");
    expect(isos([r.latestAtOrBefore(at("2024-11-03T06:30:00Z"), 0)!])).toEqual(["2024-11-03T06:00:00.000Z"]);
    expect(isos([r.latestAtOrBefore(at("2024-11-03T05:59:59Z"), 0)!])).toEqual(["2024-11-03T05:00:00.000Z"]);
    expect(r.latestAtOrBefore(at("2024-11-03T05:59:59Z"), at("2024-11-03T05:30:00Z"))).toBeUndefined();
  });
});

describe("missed occurrences", () => {
  const hourly = (missed?: MissedPolicy) => defineSchedule({ name: "h", cron: "0 * * * *", job: "j", payload: {}, missed });
  const expected = at("2024-05-01T10:00:00Z");
  const plan = (missed: MissedPolicy | undefined, now: string) => {
    const p = planOccurrences(hourly(missed), expected, at(now), 5 * MIN);
    return { runs: isos(p.occurrences), next: isos([p.next])[0], skipped: p.skipped };
  };

  it("skip (default): runs an on-time occurrence, drops late and superseded ones", () => {
    expect(plan(undefined, "2024-05-01T10:00:40Z")).toEqual({ runs: ["2024-05-01T10:00:00.000Z"], next: "2024-05-01T11:00:00.000Z", skipped: false });
    // Outage from 10:00 to 13:20: 10, 11, 12 and 13 o'clock all passed; 13:00 is 20 minutes late.
    expect(plan("skip", "2024-05-01T13:20:00Z")).toEqual({ runs: [], next: "2024-05-01T14:00:00.000Z", skipped: true });
    // Back at 13:02: the 13:00 run is on time, 10-12 are dropped.
    expect(plan("skip", "2024-05-01T13:02:00Z")).toEqual({ runs: ["2024-05-01T13:00:00.000Z"], next: "2024-05-01T14:00:00.000Z", skipped: true });
  });

  it("latest: runs the most recent missed occurrence once", () => {
    expect(plan("latest", "2024-05-01T13:20:00Z").runs).toEqual(["2024-05-01T13:00:00.000Z"]);
  });

  it("catchUp: runs each missed occurrence up to the cap, the most recent ones, oldest first", () => {
    expect(plan({ catchUp: 2 }, "2024-05-01T13:20:00Z").runs).toEqual(["2024-05-01T12:00:00.000Z", "2024-05-01T13:00:00.000Z"]);
    expect(plan({ catchUp: 10 }, "2024-05-01T13:20:00Z")).toEqual({
      runs: ["10", "11", "12", "13"].map((h) => `2024-05-01T${h}:00:00.000Z`),
      next: "2024-05-01T14:00:00.000Z",
      skipped: false,
    });
  });
});

describe("validation", () => {
  const code = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(JobsError);
      return { code: (e as JobsError).code, message: (e as JobsError).message, details: (e as JobsError).details };
    }
    throw new Error("expected a JobsError");
  };

  it("rejects a bad cron, an unknown zone and a bad missed policy, naming the schedule", () => {
    const base = { name: "nightly", job: "j", payload: {} };
    expect(code(() => defineSchedule({ ...base, cron: "61 * * * *" }))).toMatchObject({ code: "invalid_schedule", message: expect.stringContaining('"nightly"') });
    expect(code(() => defineSchedule({ ...base, cron: "0 0 30 2 *" })).message).toMatch(/nightly.*invalid cron/);
    expect(code(() => defineSchedule({ ...base, cron: "0 3 * * *", timezone: "Mars/Olympus" }))).toMatchObject({
      code: "invalid_schedule",
      details: { schedule: "nightly", field: "timezone" },
    });
    expect(code(() => defineSchedule({ ...base, cron: "0 3 * * *", missed: { catchUp: 0 } })).details).toMatchObject({ field: "missed" });
    expect(code(() => defineSchedule({ ...base, name: "bad name!", cron: "0 3 * * *" })).code).toBe("invalid_schedule");
  });

  it("rejects at createJobs a payload the job's schema refuses, an unknown job, and a duplicate name", () => {
    const job = defineJob({ name: "mail", schema: z.object({ to: z.string().email() }), handler: () => {} });
    const db = fromPg({ query: async () => ({ rows: [], rowCount: 0 }) } satisfies PgLike);
    const bad = code(() => createJobs({ db, jobs: [job], schedules: [defineSchedule({ name: "digest", cron: "0 8 * * *", job: "mail", payload: { to: "nope" } })] }));
    expect(bad).toMatchObject({ code: "invalid_schedule", details: { schedule: "digest", cause: "invalid_payload" } });
    expect(bad.message).toContain('"digest"');
    expect(code(() => createJobs({ db, jobs: [job], schedules: [{ name: "x", cron: "0 8 * * *", job: "nope", payload: {} }] }))).toMatchObject({
      code: "invalid_schedule",
      details: { schedule: "x", cause: "unknown_job" },
    });
    const s = defineSchedule({ name: "x", cron: "0 8 * * *", job: "mail", payload: { to: "a@b.co" } });
    expect(code(() => createJobs({ db, jobs: [job], schedules: [s, s] })).message).toContain("defined twice");
  });

  it("describes common expressions in words, with the zone", () => {
    const d = (cron: string, timezone = "America/New_York") => defineSchedule({ name: "d", cron, timezone, job: "j", payload: {} }).description;
    expect(d("0 * * * *")).toBe("every hour at minute 0 (America/New_York)");
    expect(d("*/15 * * * *", "UTC")).toBe("every 15 minutes (UTC)");
    expect(d("30 9 * * 1-5", "Europe/London")).toBe("at 09:30 on weekdays (Europe/London)");
    expect(d("0 9,17 * * *")).toBe("every day at 09:00 and 17:00 (America/New_York)");
    expect(d("0 0 L * *")).toBe('cron "0 0 L * *" (America/New_York)');
  });

  it("defaults the zone to UTC and the missed policy to skip", () => {
    const s = defineSchedule({ name: "d", cron: "@daily", job: "j", payload: {} });
    expect({ timezone: s.timezone, missed: s.missed, next: isos([s.rule.nextAfter(at("2024-01-01T12:00:00Z"))]) }).toEqual({
      timezone: "UTC",
      missed: "skip",
      next: ["2024-01-02T00:00:00.000Z"],
    });
  });
});


describe("day of month and day of week: dayMatch", () => {
  const DAY = 24 * 60 * MIN;
  const daily = (cron: string, dayMatch: "or" | "and" | undefined, from: string, to: string, timezone = "UTC") => {
    const r = defineSchedule({ name: "d", cron, timezone, job: "j", payload: {}, dayMatch }).rule;
    const out: number[] = [];
    for (let t = r.nextAfter(at(from) - 1); t < at(to); t = r.nextAfter(t)) out.push(t);
    return isos(out);
  };
  /** Midnight UTC of every day in [from, to) whose date passes `keep`: a reference computed day by day. */
  const midnights = (from: string, to: string, keep: (d: Date) => boolean) => {
    const out: number[] = [];
    for (let t = at(from); t < at(to); t += DAY) if (keep(new Date(t))) out.push(t);
    return isos(out);
  };
  const odd = (d: Date) => d.getUTCDate() % 2 === 1;
  const monday = (d: Date) => d.getUTCDay() === 1;

  it('runs `0 0 */2 * 1` on odd days or Mondays by default ("or", as cron-parser does)', () => {
    const runs = daily("0 0 */2 * 1", undefined, "2024-01-01T00:00:00Z", "2024-04-01T00:00:00Z");
    expect(runs).toEqual(midnights("2024-01-01T00:00:00Z", "2024-04-01T00:00:00Z", (d) => odd(d) || monday(d)));
    // Monday the 8th (even) and Wednesday the 3rd (odd) both run.
    expect(runs).toContain("2024-01-08T00:00:00.000Z");
    expect(runs).toContain("2024-01-03T00:00:00.000Z");
    expect(daily("0 0 */2 * 1", "or", "2024-01-01T00:00:00Z", "2024-04-01T00:00:00Z")).toEqual(runs);
  });

  it('runs `0 0 */2 * 1` only on odd-dated Mondays with dayMatch "and" (as Vixie cron does)', () => {
    const runs = daily("0 0 */2 * 1", "and", "2024-01-01T00:00:00Z", "2024-04-01T00:00:00Z");
    expect(runs).toEqual(["2024-01-01", "2024-01-15", "2024-01-29", "2024-02-05", "2024-02-19", "2024-03-11", "2024-03-25"].map((d) => `${d}T00:00:00.000Z`));
    expect(runs).toEqual(midnights("2024-01-01T00:00:00Z", "2024-04-01T00:00:00Z", (d) => odd(d) && monday(d)));
    // Six fields (seconds first) read the day fields at their own places.
    expect(daily("0 0 0 */2 * 1", "and", "2024-01-01T00:00:00Z", "2024-04-01T00:00:00Z")).toEqual(runs);
  });

  it('"and" works backwards too, in a zone with DST, and in the missed-occurrence plans', () => {
    const s = defineSchedule({ name: "ny", cron: "0 9 */2 * 1", timezone: "America/New_York", job: "j", payload: {}, dayMatch: "and", missed: { catchUp: 10 } });
    // The odd-dated Mondays around the DST change of 10 March are 19 February (09:00 EST) and 11 March (09:00 EDT).
    expect(isos([s.rule.nextAfter(at("2024-02-20T00:00:00Z"))])).toEqual(["2024-03-11T13:00:00.000Z"]);
    expect(isos([s.rule.latestAtOrBefore(at("2024-03-10T00:00:00Z"), 0)!])).toEqual(["2024-02-19T14:00:00.000Z"]);
    expect(s.rule.latestAtOrBefore(at("2024-03-10T00:00:00Z"), at("2024-02-20T00:00:00Z"))).toBeUndefined();
    const plan = planOccurrences(s, at("2024-02-05T14:00:00Z"), at("2024-03-30T00:00:00Z"), 5 * MIN);
    expect(isos(plan.occurrences)).toEqual(["2024-02-05T14:00:00.000Z", "2024-02-19T14:00:00.000Z", "2024-03-11T13:00:00.000Z", "2024-03-25T13:00:00.000Z"]);
    expect(isos([plan.next])).toEqual(["2024-04-01T13:00:00.000Z"]);
  });

  it('"and" skips whole refused days even for an every-second expression', () => {
    const runs = daily("* * * */2 * 1", "and", "2024-01-02T00:00:00Z", "2024-01-15T00:00:03Z");
    // Tuesday the 2nd to Sunday the 14th has no odd Monday; Monday the 15th does.
    expect(runs).toEqual(["2024-01-15T00:00:00.000Z", "2024-01-15T00:00:01.000Z", "2024-01-15T00:00:02.000Z"]);
  });

  it("changes nothing when a day field is `*`: cron-parser already needs only the other", () => {
    for (const cron of ["0 0 */2 * *", "0 0 * * 1", "0 0 * * 1-5", "@weekly"]) {
      expect(daily(cron, "and", "2024-01-01T00:00:00Z", "2024-03-01T00:00:00Z")).toEqual(daily(cron, "or", "2024-01-01T00:00:00Z", "2024-03-01T00:00:00Z"));
    }
  });

  it('refuses under "and" what can never match, and a dayMatch that is neither', () => {
    const define = (cron: string, dayMatch: unknown) => () => defineSchedule({ name: "never", cron, job: "j", payload: {}, dayMatch: dayMatch as "and" });
    // Valid under "or" (the day of week makes up for 30 February), never under "and".
    expect(define("0 0 30 2 */2", "or")).not.toThrow();
    expect(define("0 0 30 2 */2", "and")).toThrow(/never.*invalid cron.*day of month must occur/);
    // Days 1 and 21 are never a month's fifth Monday (29-31).
    expect(define("0 0 */20 * 1#5", "and")).toThrow(/never.*no occurrence/);
    expect(define("0 0 */2 * 1", "xor")).toThrow(JobsError);
    try {
      define("0 0 */2 * 1", "xor")();
    } catch (e) {
      expect((e as JobsError).details).toMatchObject({ schedule: "never", field: "dayMatch" });
    }
  });

  it('describes an "and" schedule by what it means, and hashes "and" apart from the default', async () => {
    const d = (dayMatch?: "or" | "and") => defineSchedule({ name: "h", cron: "0 0 */2 * 1", job: "j", payload: {}, dayMatch });
    expect(d("and").description).toBe('cron "0 0 */2 * 1" on days matching both day fields (UTC)');
    expect(d().description).toBe('cron "0 0 */2 * 1" (UTC)');
    // Definitions that do not choose "and" hash as before dayMatch existed: a deploy adding the option rewrites no row.
    const before = await definitionHash({ name: "h", cron: "0 0 */2 * 1", timezone: "UTC", job: "j", payload: {}, missed: "skip" });
    expect(await definitionHash(d())).toBe(before);
    expect(await definitionHash(d("or"))).toBe(before);
    expect(await definitionHash(d("and"))).not.toBe(before);
  });

  it("warns once at createJobs for a crontab line Vixie cron would read as AND, unless dayMatch was chosen", () => {
    const job = defineJob({ name: "j", schema: z.object({}), handler: () => {} });
    const db = fromPg({ query: async () => ({ rows: [], rowCount: 0 }) } satisfies PgLike);
    const warnings = (schedules: Parameters<typeof createJobs>[0]["schedules"]) => {
      const logger = memoryLogger();
      createJobs({ db, jobs: [job], schedules, logger });
      return logger.entries.filter((e) => e.level === "warn");
    };
    const first = warnings([
      { name: "vixie-odd-mondays", cron: "0 0 */2 * 1", job: "j", payload: {} },
      { name: "vixie-six-fields", cron: "0 30 9 1-7 * */2", job: "j", payload: {} },
      { name: "chosen-or", cron: "0 0 */2 * 1", job: "j", payload: {}, dayMatch: "or" },
      { name: "chosen-and", cron: "0 0 */2 * 1", job: "j", payload: {}, dayMatch: "and" },
      // Where Vixie cron also reads OR, or only one day field is restricted: nothing to say.
      { name: "both-plain", cron: "0 0 1,15 * 1", job: "j", payload: {} },
      { name: "one-field", cron: "0 0 */2 * *", job: "j", payload: {} },
    ]);
    expect(first).toEqual([
      expect.objectContaining({ msg: "schedule runs on days matching either day field", schedule: "vixie-odd-mondays", cron: "0 0 */2 * 1", hint: expect.stringContaining('dayMatch: "or"') }),
      expect.objectContaining({ schedule: "vixie-six-fields", cron: "0 30 9 1-7 * */2" }),
    ]);
    // Edge runtimes build an instance per request: the same schedule is not warned about again.
    expect(warnings([{ name: "vixie-odd-mondays", cron: "0 0 */2 * 1", job: "j", payload: {} }])).toEqual([]);
  });
});
