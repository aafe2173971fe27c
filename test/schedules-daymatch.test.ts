// How a schedule's two day fields combine (dayMatch "or" or "and"), without a database: the days
// each runs on, backwards and in missed-occurrence plans, what "and" refuses, its description
// and hash, and the warning for a crontab line Vixie cron would read as AND.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, defineSchedule, fromPg, JobsError, memoryLogger, type PgLike } from "../src/index.js";
import { definitionHash } from "../src/schedules/hash.js";
import { planOccurrences } from "../src/schedules/plan.js";

const MIN = 60_000;
const at = (iso: string) => Date.parse(iso);
const isos = (xs: number[]) => xs.map((x) => new Date(x).toISOString());

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
