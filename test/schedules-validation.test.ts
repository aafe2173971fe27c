// Defining a schedule, without a database: what defineSchedule and createJobs refuse (naming the
// schedule), descriptions in words, and the defaults.
import { describe, expect, it, vi } from "vitest";
import { CronRule } from "../src/schedules/cron.js";
import { z } from "zod";
import { createJobs, defineJob, defineSchedule, fromPg, JobsError, type PgLike } from "../src/index.js";

const at = (iso: string) => Date.parse(iso);
const isos = (xs: number[]) => xs.map((x) => new Date(x).toISOString());

describe("validation", () => {
  it("checks a schedule's job and payload at compile time when given the jobs as a type argument", () => {
    const report = defineJob({ name: "daily-report", schema: z.object({ team: z.string() }), handler: () => {} });
    const ping = defineJob({ name: "ping", schema: z.object({ host: z.string() }), handler: () => {} });
    const jobList = [report, ping] as const;
    type Jobs = (typeof jobList)[number];
    const typed = defineSchedule<Jobs>({ name: "typed", cron: "0 * * * *", job: "daily-report", payload: { team: "ops" } });
    // @ts-expect-error: the payload of another job
    defineSchedule<Jobs>({ name: "wrong-payload", cron: "0 * * * *", job: "daily-report", payload: { host: "a" } });
    // @ts-expect-error: a job not in the list
    defineSchedule<Jobs>({ name: "wrong-job", cron: "0 * * * *", job: "no-such-job", payload: {} });
    // @ts-expect-error: one job as the type argument
    defineSchedule<typeof ping>({ name: "one", cron: "0 * * * *", job: "ping", payload: { host: 1 } });
    // Without a type argument, any job and payload (checked when createJobs runs).
    const loose = defineSchedule({ name: "loose", cron: "0 * * * *", job: "ping", payload: { anything: true } });
    expect(createJobs({ db: fromPg({ query: async () => ({ rows: [] }) } as unknown as PgLike), jobs: jobList, schedules: [typed] }).schedules).toBeDefined();
    expect([typed.job, loose.job]).toEqual(["daily-report", "ping"]);
  });

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

  it("takes a schedule another copy of the module made (a CommonJS jobs module beside the CLI's copy: it was an unknown option \"rule\")", async () => {
    // A query makes a module of its own in vitest: a second copy of define.ts, with its own record of what it made.
    // @ts-expect-error TypeScript resolves no query
    const other = (await import("../src/schedules/define.js?another-copy")) as typeof import("../src/schedules/define.js");
    expect(other.defineSchedule).not.toBe(defineSchedule);
    const made = other.defineSchedule({ name: "hourly-hello", job: "j", payload: {}, cron: "0 * * * *", timezone: "Europe/Berlin" });
    const taken = defineSchedule(made);
    expect(taken).not.toBe(made);
    expect({ ...taken, rule: undefined }).toEqual({ ...made, rule: undefined });
    // A plain object naming those fields is still refused.
    expect(code(() => defineSchedule({ name: "x", job: "j", payload: {}, cron: "0 * * * *", rule: 1 } as never)).message).toMatch(/unknown option "rule"/);
  });

  it("rejects an option it does not know, and a null zone, instead of reading them as the defaults", () => {
    const base = { name: "ny9", job: "j", payload: {}, cron: "0 9 * * *" };
    // `timeZone`, as Intl spells it: the schedule would have run at 09:00 UTC.
    expect(code(() => defineSchedule({ ...base, timeZone: "America/New_York" } as never))).toMatchObject({
      code: "invalid_schedule",
      message: expect.stringContaining('unknown option "timeZone" (did you mean timezone?)'),
      details: { schedule: "ny9", field: "timeZone" },
    });
    expect(code(() => defineSchedule({ ...base, misssed: "latest" } as never)).details).toMatchObject({ field: "misssed" });
    expect(code(() => defineSchedule({ ...base, daymatch: "and" } as never)).message).toContain("did you mean dayMatch?");
    expect(code(() => defineSchedule({ ...base, timezone: null } as never)).details).toMatchObject({ field: "timezone" });
    // Plain objects handed to createJobs are checked alike.
    const j = defineJob({ name: "j", schema: z.object({}), handler: () => {} });
    const db = fromPg({ query: async () => ({ rows: [], rowCount: 0 }) } as unknown as PgLike);
    expect(code(() => createJobs({ db, jobs: [j], schedules: [{ ...base, timeZone: "UTC" } as never] })).code).toBe("invalid_schedule");
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

  it("keeps the zone as named (a retired alias is never shown for it), spelling only its case as the runtime does", () => {
    const zone = (timezone: string) => defineSchedule({ name: "z", cron: "0 9 * * *", job: "j", payload: {}, timezone }).timezone;
    expect(["Asia/Kolkata", "Europe/Kyiv", "America/Nuuk", "utc", "europe/london"].map(zone)).toEqual(["Asia/Kolkata", "Europe/Kyiv", "America/Nuuk", "UTC", "Europe/London"]);
    const kolkata = defineSchedule({ name: "k", cron: "0 9 * * *", job: "j", payload: {}, timezone: "Asia/Kolkata" });
    expect(kolkata.description).toContain("Asia/Kolkata");
    expect(isos([kolkata.rule.nextAfter(at("2024-01-01T00:00:00Z"))])).toEqual(["2024-01-01T03:30:00.000Z"]);
  });

  it("defaults the zone to UTC and the missed policy to skip", () => {
    const s = defineSchedule({ name: "d", cron: "@daily", job: "j", payload: {} });
    expect({ timezone: s.timezone, missed: s.missed, next: isos([s.rule.nextAfter(at("2024-01-01T12:00:00Z"))]) }).toEqual({
      timezone: "UTC",
      missed: "skip",
      next: ["2024-01-02T00:00:00.000Z"],
    });
  });

  it("checks a defined schedule once: it is frozen, and building a queue (per request on the edge) does no cron arithmetic for it", async () => {
    const job = defineJob({ name: "mail", schema: z.object({ to: z.string() }), handler: () => {} });
    const db = fromPg({ query: async () => ({ rows: [], rowCount: 0 }) } satisfies PgLike);
    const schedules = Array.from({ length: 50 }, (_, i) =>
      defineSchedule({ name: `s${i}`, cron: `${i} 8 * * *`, timezone: "Asia/Tokyo", job: "mail", payload: { to: "a" }, missed: { catchUp: 2 } }));
    expect(Object.isFrozen(schedules[0]) && Object.isFrozen(schedules[0]!.missed)).toBe(true);
    expect(defineSchedule(schedules[0]!)).toBe(schedules[0]);
    const next = vi.spyOn(CronRule.prototype, "nextAfter");
    try {
      createJobs({ db, jobs: [job], schedules });
      expect(next).not.toHaveBeenCalled();
    } finally {
      next.mockRestore();
    }
    // Nor hashes them again: each definition's hash is made once a process (one digest here: the set's).
    const digest = vi.spyOn(crypto.subtle, "digest");
    try {
      await createJobs({ db, jobs: [job], schedules }).schedules.list({ next: 0 });
      const before = digest.mock.calls.length;
      await createJobs({ db, jobs: [job], schedules }).schedules.list({ next: 0 });
      expect(digest.mock.calls.length - before).toBe(1);
    } finally {
      digest.mockRestore();
    }
    // A copy is a plain object: checked again.
    expect(code(() => createJobs({ db, jobs: [job], schedules: [{ ...schedules[0]!, cron: "61 * * * *" }] })).code).toBe("invalid_schedule");
  });
});
