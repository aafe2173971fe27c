// Schedules against the real server: the idle tick's cost, exactly-once under racing
// ticks, DST through whole ticks, sync (added/changed/removed), pause/resume/run-now,
// missed policies after an outage, and a dead-lettering occurrence.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  countingDb, createJobs, defineJob, JobsError, memoryLogger, PermanentJobError,
  type Db, type ScheduleDefinition,
} from "../src/index.js";
import { materializeOccurrences } from "../src/store/schedules/materialize.js";
import { tablesFor } from "../src/store/shared/tables.js";
import { harness } from "./support/harness.js";

const h = await harness("schedules");

const MIN = 60_000;
let prefixes = 0;

/** A queue under its own table prefix (so tests do not share schedules), a settable clock and a record of runs. */
const world = async (start: string, options: { fail?: boolean; graceMs?: number } = {}) => {
  const prefix = `s${++prefixes}_`;
  const clock = { t: Date.parse(start) };
  const runs: string[] = [];
  const report = defineJob({
    name: "report",
    schema: z.object({ kind: z.string() }),
    maxAttempts: 1,
    handler: (_p, ctx) => {
      runs.push(ctx.correlationId ?? "none");
      if (options.fail) throw new PermanentJobError("upstream gone");
    },
  });
  const make = (schedules: ScheduleDefinition[], db: Db | pg.Pool = h.main, settings: { maxTicks?: number } = {}) => {
    const logger = memoryLogger();
    const jobs = createJobs({
      db, jobs: [report], schedules, logger, random: () => 0.5,
      settings: { tablePrefix: prefix, leaseMarginMs: 1_000, ...settings },
      scheduleOptions: { now: () => new Date(clock.t), graceMs: options.graceMs },
    });
    return Object.assign(jobs, { logs: logger.entries });
  };
  await make([]).migrate();
  const t = tablesFor(prefix);
  const set = (iso: string) => void (clock.t = Date.parse(iso));
  const advance = (ms: number) => void (clock.t += ms);
  return { make, runs, clock, set, advance, t, prefix };
};

const hourly = (name: string, extra: Partial<ScheduleDefinition> = {}): ScheduleDefinition => ({
  name, cron: "0 * * * *", job: "report", payload: { kind: name }, ...extra,
});

/** Ticks every `stepMs` of the fake clock from `from` to `to`. */
const tickThrough = async (jobs: { tick: (o?: object) => Promise<unknown> }, w: { clock: { t: number } }, from: string, to: string, stepMs: number) => {
  for (w.clock.t = Date.parse(from); w.clock.t <= Date.parse(to); w.clock.t += stepMs) await jobs.tick({ budgetMs: 10_000 });
};

describe("tick cost", () => {
  it("an idle tick with unchanged schedules is exactly one statement", async () => {
    const w = await world("2024-05-01T10:00:30Z");
    const counted = countingDb(h.db);
    const jobs = w.make([hourly("a"), hourly("b", { cron: "*/5 * * * *" })], counted);
    const first = await jobs.tick({ budgetMs: 5_000 });
    // probe, read rows, write rows: the one-time sync.
    expect(first.statements).toBe(3);
    w.advance(MIN);
    counted.statements = 0;
    const idle = await jobs.tick({ budgetMs: 5_000 });
    expect(idle.statements).toBe(1);
    expect(counted.statements).toBe(1);
    expect(idle.claimed).toBe(0);
  });

  it("due occurrences of any number of schedules cost one more statement", async () => {
    const touching = async (count: number) => {
      const w = await world("2024-05-01T10:59:30Z");
      const texts: string[] = [];
      const recording: Db = { query: (text, params) => (texts.push(text), h.db.query(text, params)) };
      const jobs = w.make(Array.from({ length: count }, (_, i) => hourly(`s${i}`)), recording);
      await jobs.tick({ budgetMs: 5_000 });
      w.set("2024-05-01T11:00:10Z");
      texts.length = 0;
      const r = await jobs.tick({ budgetMs: 5_000, concurrency: 50 });
      expect(r.succeeded).toBe(count);
      expect(w.runs).toHaveLength(count);
      return texts.filter((t) => t.includes(w.t.schedules)).length;
    };
    // The probe in the first statement, and one materialize statement.
    expect(await touching(1)).toBe(2);
    expect(await touching(25)).toBe(2);
  });
});

describe("exactly once", () => {
  it("five ticks racing on separate connections produce exactly one job per occurrence", async () => {
    const w = await world("2024-05-01T09:58:30Z");
    const schedules = [
      { name: "minutely", cron: "* * * * *", job: "report", payload: { kind: "m" } },
      { name: "catchup", cron: "*/2 * * * *", job: "report", payload: { kind: "c" }, missed: { catchUp: 5 } },
      hourly("hourly", { missed: "latest" }),
    ] satisfies ScheduleDefinition[];
    const pools = Array.from({ length: 5 }, () => h.pool(3));
    const instances = pools.map((p) => w.make(schedules, p));
    await instances[0]!.tick({ budgetMs: 5_000 }); // sync
    const expected: string[] = [];
    for (let minute = 0; minute < 6; minute++) {
      w.advance(MIN);
      const reports = await Promise.all(instances.map((j) => j.tick({ budgetMs: 10_000 })));
      expect(reports.every((r) => r.leaseLost === 0)).toBe(true);
    }
    // 09:59 .. 10:04 minutely; 10:00, 10:02, 10:04 every two minutes; 10:00 hourly.
    for (let m = 59; m <= 64; m++) {
      const iso = new Date(Date.parse("2024-05-01T09:00:00Z") + m * MIN).toISOString();
      expected.push(`schedule:minutely:${iso}`);
      if (m % 2 === 0) expected.push(`schedule:catchup:${iso}`);
    }
    expected.push("schedule:hourly:2024-05-01T10:00:00.000Z");
    expect([...w.runs].sort()).toEqual([...expected].sort());
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 0 }]);
  });

  it("a tick that finds every slot taken still runs the occurrence it enqueued once a slot frees", async () => {
    const w = await world("2024-05-01T09:59:30Z");
    const jobs = w.make([hourly("h")], h.main, { maxTicks: 1 });
    await jobs.tick({ budgetMs: 5_000 });
    // Another tick holds the only slot: it claimed before the occurrence existed and is about to finish.
    await h.db.query(`UPDATE ${w.t.ticks} SET owner = gen_random_uuid(), expires_at = now() + interval '30 seconds', started_at = now() WHERE slot = 1`);
    const released = new Promise((resolve) => setTimeout(resolve, 50)).then(() =>
      h.db.query(`UPDATE ${w.t.ticks} SET owner = NULL, expires_at = NULL WHERE slot = 1`));
    w.set("2024-05-01T10:00:05Z");
    const report = await jobs.tick({ budgetMs: 5_000 });
    await released;
    expect(report).toMatchObject({ capped: false, claimed: 1, succeeded: 1 });
    expect(w.runs).toEqual(["schedule:h:2024-05-01T10:00:00.000Z"]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 0 }]);
  });

  it("a slow tick that saw the old next_run_at after the occurrence finished enqueues nothing", async () => {
    const w = await world("2024-05-01T09:59:30Z");
    const jobs = w.make([hourly("h")]);
    await jobs.tick({ budgetMs: 5_000 });
    const [row] = await h.rows<{ hash: string; next: string }>(
      `SELECT definition_hash AS hash, to_char(next_run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next FROM ${w.t.schedules}`,
    );
    w.set("2024-05-01T10:00:05Z");
    await jobs.tick({ budgetMs: 5_000 });
    expect(w.runs).toEqual(["schedule:h:2024-05-01T10:00:00.000Z"]);
    // The finished job left the queue, so its idempotency key no longer dedupes: the row must.
    const late = await materializeOccurrences(h.db, w.t, [{
      name: "h", expected: row!.next, definition_hash: row!.hash, next_run_at: "2024-05-01T11:00:00.000Z",
      jobs: [{ id: crypto.randomUUID(), run_at: row!.next, key: `schedule:h:${row!.next}`, priority: 0, max_attempts: 1, flow_key: null, concurrency_key: null, rate_keys: null }],
    }]);
    expect(late).toEqual({ advanced: [], enqueued: [] });
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 0 }]);
  });
});

describe("failures", () => {
  it("an occurrence whose job dead-letters is followed by the next occurrence as usual", async () => {
    const w = await world("2024-05-01T09:59:30Z", { fail: true });
    const jobs = w.make([hourly("flaky")]);
    await jobs.tick({ budgetMs: 5_000 });
    w.set("2024-05-01T10:00:20Z");
    expect((await jobs.tick({ budgetMs: 5_000 })).deadLettered).toBe(1);
    w.set("2024-05-01T11:00:20Z");
    expect((await jobs.tick({ budgetMs: 5_000 })).deadLettered).toBe(1);
    const dead = await h.rows(`SELECT idempotency_key, correlation_id, reason FROM ${w.t.deadLetters} ORDER BY idempotency_key`);
    expect(dead).toEqual(["10", "11"].map((hh) => {
      const key = `schedule:flaky:2024-05-01T${hh}:00:00.000Z`;
      return { idempotency_key: key, correlation_id: key, reason: "permanent" };
    }));
    const [info] = await jobs.schedules.list({ next: 1 });
    expect(info).toMatchObject({ paused: false, nextRuns: ["2024-05-01T12:00:00.000Z"], lastOccurrenceAt: "2024-05-01T11:00:00.000Z" });
  });
});

describe("sync from code", () => {
  it("a schedule removed from code stops, and its row is deleted", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    await w.make([hourly("keep"), hourly("drop")]).tick({ budgetMs: 5_000 });
    expect(await h.rows(`SELECT name FROM ${w.t.schedules} ORDER BY name`)).toEqual([{ name: "drop" }, { name: "keep" }]);
    const jobs = w.make([hourly("keep")]);
    await jobs.tick({ budgetMs: 5_000 });
    expect(await h.rows(`SELECT name FROM ${w.t.schedules}`)).toEqual([{ name: "keep" }]);
    await tickThrough(jobs, w, "2024-05-01T10:00:10Z", "2024-05-01T11:00:10Z", 30 * MIN);
    expect(w.runs).toEqual(["schedule:keep:2024-05-01T10:00:00.000Z", "schedule:keep:2024-05-01T11:00:00.000Z"]);
  });

  it("a changed schedule takes its new cron at the next tick", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    await w.make([hourly("c")]).tick({ budgetMs: 5_000 });
    const changed = w.make([hourly("c", { cron: "*/20 * * * *" })]);
    expect((await changed.schedules.list({ next: 2 }))[0]!.nextRuns).toEqual(["2024-05-01T09:40:00.000Z", "2024-05-01T10:00:00.000Z"]);
    await tickThrough(changed, w, "2024-05-01T09:31:00Z", "2024-05-01T10:21:00Z", 10 * MIN);
    expect(w.runs).toEqual(["09:40", "10:00", "10:20"].map((m) => `schedule:c:2024-05-01T${m}:00.000Z`));
    const [row] = await h.rows(`SELECT cron, payload FROM ${w.t.schedules}`);
    expect(row).toEqual({ cron: "*/20 * * * *", payload: { kind: "c" } });
  });

  it("a changed payload reaches the next occurrence", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    await w.make([hourly("p")]).tick({ budgetMs: 5_000 });
    const changed = w.make([hourly("p", { payload: { kind: "v2" } })]);
    await changed.tick({ budgetMs: 5_000 });
    expect(await h.rows(`SELECT payload FROM ${w.t.schedules}`)).toEqual([{ payload: { kind: "v2" } }]);
  });
});

describe("pause, resume, run now", () => {
  it("a paused schedule enqueues nothing, stays paused across a sync, and resumes from now", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    const jobs = w.make([hourly("p"), hourly("other")]);
    await jobs.tick({ budgetMs: 5_000 });
    const paused = await jobs.schedules.pause("p");
    expect(paused).toMatchObject({ name: "p", paused: true, nextRuns: [] });
    // A deploy that changes another schedule syncs the table; the pause stays.
    const redeployed = w.make([hourly("p"), hourly("other", { cron: "30 * * * *" })]);
    await tickThrough(redeployed, w, "2024-05-01T09:40:00Z", "2024-05-01T12:10:00Z", 10 * MIN);
    expect(w.runs.filter((r) => r.startsWith("schedule:p:"))).toEqual([]);
    expect(w.runs.filter((r) => r.startsWith("schedule:other:"))).toEqual(["10:30", "11:30"].map((m) => `schedule:other:2024-05-01T${m}:00.000Z`));
    expect((await redeployed.schedules.list()).find((s) => s.name === "p")).toMatchObject({ paused: true, nextRuns: [] });
    // Resumed at 12:10: the occurrences passed while paused are not run; 13:00 is next.
    const resumed = await redeployed.schedules.resume("p");
    expect(resumed).toMatchObject({ paused: false, nextRuns: expect.arrayContaining(["2024-05-01T13:00:00.000Z"]) });
    expect(resumed.nextRuns[0]).toBe("2024-05-01T13:00:00.000Z");
    await tickThrough(redeployed, w, "2024-05-01T12:20:00Z", "2024-05-01T13:00:30Z", 20 * MIN);
    expect(w.runs.filter((r) => r.startsWith("schedule:p:"))).toEqual(["schedule:p:2024-05-01T13:00:00.000Z"]);
  });

  it("pause works before any tick synced the schedule", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    const jobs = w.make([hourly("early")]);
    expect(await jobs.schedules.pause("early")).toMatchObject({ paused: true });
    await tickThrough(jobs, w, "2024-05-01T09:31:00Z", "2024-05-01T10:01:00Z", 10 * MIN);
    expect(w.runs).toEqual([]);
  });

  it("run-now enqueues one job at once, even while paused, and leaves the occurrences alone", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    const jobs = w.make([hourly("r")]);
    await jobs.tick({ budgetMs: 5_000 });
    await jobs.schedules.pause("r");
    const { id } = await jobs.schedules.run("r");
    const [job] = await h.rows(`SELECT id::text, job_name, payload, correlation_id, idempotency_key, run_at <= now() AS due FROM ${w.t.queue}`);
    expect(job).toEqual({
      id, job_name: "report", payload: { kind: "r" }, due: true,
      correlation_id: "schedule:r:manual:2024-05-01T09:30:00.000Z", idempotency_key: "schedule:r:manual:2024-05-01T09:30:00.000Z",
    });
    const [info] = await jobs.schedules.list();
    expect(info).toMatchObject({ lastJobId: id, paused: true, nextRuns: [] });
    expect(info!.lastEnqueuedAt).not.toBeNull();
    await jobs.tick({ budgetMs: 5_000 });
    expect(w.runs).toEqual(["schedule:r:manual:2024-05-01T09:30:00.000Z"]);
  });

  it("unknown names are not_found; list validates `next`", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    const jobs = w.make([hourly("x")]);
    for (const call of [() => jobs.schedules.pause("nope"), () => jobs.schedules.resume("nope"), () => jobs.schedules.run("nope")]) {
      await expect(call()).rejects.toMatchObject({ name: "JobsError", code: "not_found" });
    }
    await expect(jobs.schedules.list({ next: -1 })).rejects.toBeInstanceOf(JobsError);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.schedules}`)).toEqual([{ n: 0 }]);
  });

  it("lists definitions with their next occurrences, description and last job", async () => {
    const w = await world("2024-03-10T05:30:00Z");
    const jobs = w.make([hourly("ny", { timezone: "America/New_York", missed: { catchUp: 3 } })]);
    const before = await jobs.schedules.list({ next: 3 });
    expect(before).toEqual([{
      name: "ny", cron: "0 * * * *", timezone: "America/New_York", job: "report", payload: { kind: "ny" },
      missed: { catchUp: 3 }, paused: false,
      nextRuns: ["2024-03-10T06:00:00.000Z", "2024-03-10T07:00:00.000Z", "2024-03-10T08:00:00.000Z"],
      lastEnqueuedAt: null, lastJobId: null, lastOccurrenceAt: null,
      description: "every hour at minute 0 (America/New_York)",
    }]);
  });
});

describe("DST through whole ticks", () => {
  const ticksAcross = async (zone: string, from: string, to: string) => {
    const w = await world(from);
    const jobs = w.make([
      hourly("hourly", { timezone: zone }),
      { name: "at0130", cron: "30 1 * * *", timezone: zone, job: "report", payload: { kind: "a" } },
      { name: "at0230", cron: "30 2 * * *", timezone: zone, job: "report", payload: { kind: "b" } },
    ]);
    // A tick every 5 minutes, like a platform cron, for 6 hours.
    await tickThrough(jobs, w, from, to, 5 * MIN);
    const by = (name: string) => w.runs.filter((r) => r.startsWith(`schedule:${name}:`)).map((r) => r.slice(`schedule:${name}:`.length));
    return { hourly: by("hourly"), at0130: by("at0130"), at0230: by("at0230"), all: w.runs };
  };
  const hours = (day: string, hs: string[]) => hs.map((hh) => `${day}T${hh}:00:00.000Z`);

  it("America/New_York spring-forward: every real hour; 02:30 runs once, at 03:30 EDT", async () => {
    const r = await ticksAcross("America/New_York", "2024-03-10T04:01:00Z", "2024-03-10T10:01:00Z");
    expect(r.hourly).toEqual(hours("2024-03-10", ["05", "06", "07", "08", "09", "10"]));
    expect(r.at0130).toEqual(["2024-03-10T06:30:00.000Z"]);
    expect(r.at0230).toEqual(["2024-03-10T07:30:00.000Z"]);
    expect(new Set(r.all).size).toBe(r.all.length);
  });

  it("America/New_York fall-back: every real hour, both 01:00s; 01:30 runs once", async () => {
    const r = await ticksAcross("America/New_York", "2024-11-03T03:01:00Z", "2024-11-03T09:01:00Z");
    expect(r.hourly).toEqual(hours("2024-11-03", ["04", "05", "06", "07", "08", "09"]));
    expect(r.at0130).toEqual(["2024-11-03T05:30:00.000Z"]);
    expect(r.at0230).toEqual(["2024-11-03T07:30:00.000Z"]);
    expect(new Set(r.all).size).toBe(r.all.length);
  });

  it("Europe/London, both transitions", async () => {
    const spring = await ticksAcross("Europe/London", "2024-03-30T23:01:00Z", "2024-03-31T05:01:00Z");
    expect(spring.hourly).toEqual(hours("2024-03-31", ["00", "01", "02", "03", "04", "05"]));
    // 01:30 GMT does not exist: 02:30 BST (01:30Z), the same instant as the real 02:30 BST, once each.
    expect(spring.at0130).toEqual(["2024-03-31T01:30:00.000Z"]);
    expect(spring.at0230).toEqual(["2024-03-31T01:30:00.000Z"]);
    const autumn = await ticksAcross("Europe/London", "2024-10-26T23:01:00Z", "2024-10-27T05:01:00Z");
    expect(autumn.hourly).toEqual(hours("2024-10-27", ["00", "01", "02", "03", "04", "05"]));
    expect(autumn.at0130).toEqual(["2024-10-27T00:30:00.000Z"]);
    expect(autumn.at0230).toEqual(["2024-10-27T02:30:00.000Z"]);
  });
});

describe("missed occurrences after an outage", () => {
  const outage = async (missed: ScheduleDefinition["missed"]) => {
    const w = await world("2024-05-01T09:59:30Z");
    const jobs = w.make([hourly("o", { missed })]);
    await jobs.tick({ budgetMs: 5_000 });
    w.set("2024-05-01T10:00:30Z");
    await jobs.tick({ budgetMs: 5_000 });
    // No tick from 10:00:30 until 13:20: 11, 12 and 13 o'clock were missed.
    w.set("2024-05-01T13:20:00Z");
    await Promise.all([jobs.tick({ budgetMs: 5_000 }), jobs.tick({ budgetMs: 5_000 })]);
    w.set("2024-05-01T14:00:30Z");
    await jobs.tick({ budgetMs: 5_000 });
    // Which occurrences ran, in time order: two racing ticks run them concurrently, in no fixed order.
    return w.runs.map((r) => r.slice("schedule:o:2024-05-01T".length, -".000Z".length - 3)).sort();
  };

  it("skip (default): none of the missed ones, then the next on time", async () => {
    expect(await outage(undefined)).toEqual(["10:00", "14:00"]);
  });
  it("latest: the most recent missed one once", async () => {
    expect(await outage("latest")).toEqual(["10:00", "13:00", "14:00"]);
  });
  it("catchUp: each missed one up to the cap (the most recent n)", async () => {
    expect(await outage({ catchUp: 2 })).toEqual(["10:00", "12:00", "13:00", "14:00"]);
    expect(await outage({ catchUp: 10 })).toEqual(["10:00", "11:00", "12:00", "13:00", "14:00"]);
  });
});

