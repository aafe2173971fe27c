// The schedules' admin calls against the real server: pause (kept across a sync), resume from
// now, run-now, listing with next occurrences, and unknown names.
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, JobsError } from "../src/index.js";
import { hourly, MIN, schedulesFixture, tickThrough } from "./support/schedules-fixture.js";

const { h, world } = await schedulesFixture("schedules_admin");

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
    expect((await redeployed.schedules.list()).items.find((s) => s.name === "p")).toMatchObject({ paused: true, nextRuns: [] });
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

  it("run-now before any tick synced the schedule is recorded as its last job, and the occurrences go on from there", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    const jobs = w.make([hourly("fresh")]);
    const { id } = await jobs.schedules.run("fresh");
    const [info] = (await jobs.schedules.list({ next: 1 })).items;
    expect(info).toMatchObject({ lastJobId: id, nextRuns: ["2024-05-01T10:00:00.000Z"] });
    expect(info!.lastEnqueuedAt).not.toBeNull();
    await tickThrough(jobs, w, "2024-05-01T09:31:00Z", "2024-05-01T10:01:00Z", 10 * MIN);
    expect(w.runs).toEqual(["schedule:fresh:manual:2024-05-01T09:30:00.000Z", "schedule:fresh:2024-05-01T10:00:00.000Z"]);
  });

  it("run-now with an idempotency key enqueues one job while it is queued, and keeps the schedule's last job; a bad key changes nothing", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    const jobs = w.make([hourly("k")]);
    const first = await jobs.schedules.run("k", { idempotencyKey: "form-1" });
    // The same result as the API's and the client's (it had no deduplicated here).
    expect(first).toEqual({ id: expect.any(String), deduplicated: false });
    const again = await jobs.schedules.run("k", { idempotencyKey: "form-1" });
    expect(again).toEqual({ id: first.id, deduplicated: true });
    expect((await jobs.schedules.list({ next: 1 })).items[0]).toMatchObject({ lastJobId: first.id });
    expect(await h.rows(`SELECT idempotency_key FROM ${w.t.queue}`)).toEqual([{ idempotency_key: "form-1" }]);
    for (const bad of ["", "x".repeat(256), 5]) {
      await expect(jobs.schedules.run("k", { idempotencyKey: bad as string })).rejects.toMatchObject({ code: "invalid_options", details: { field: "idempotencyKey" } });
    }
    await expect(jobs.schedules.run("k", { idempotencykey: "x" } as never)).rejects.toMatchObject({ code: "invalid_options" });
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 1 }]);
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
      correlation_id: "schedule:r:manual:2024-05-01T09:30:00.000Z", idempotency_key: null,
    });
    const [info] = (await jobs.schedules.list()).items;
    expect(info).toMatchObject({ lastJobId: id, paused: true, nextRuns: [] });
    expect(info!.lastEnqueuedAt).not.toBeNull();
    await jobs.tick({ budgetMs: 5_000 });
    expect(w.runs).toEqual(["schedule:r:manual:2024-05-01T09:30:00.000Z"]);
    // Each call is a run of its own, even in the same millisecond (this clock is fixed).
    const again = await Promise.all([jobs.schedules.run("r"), jobs.schedules.run("r"), jobs.schedules.run("r")]);
    expect(new Set(again.map((r) => r.id)).size).toBe(3);
  });

  it("a row an older release makes again (run now, pause) for a schedule a newer one removed is removed at the next tick, so re-adding it starts afresh", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    const v1 = w.make([hourly("s", { missed: { catchUp: 5 } }), hourly("other")]);
    await v1.tick({ budgetMs: 5_000 });
    // v2 removes s: its tick deletes the row.
    const v2 = w.make([hourly("other")]);
    await v2.tick({ budgetMs: 5_000 });
    const rows = async () => (await h.rows<{ name: string; paused: boolean }>(`SELECT name, paused FROM ${w.t.schedules} ORDER BY name`)).map((r) => r.name);
    expect(await rows()).toEqual(["other"]);
    // Something still running v1 (an old instance, an old checkout's CLI) runs and pauses s: its row comes back.
    await v1.schedules.run("s");
    await v1.schedules.pause("s");
    expect(await rows()).toEqual(["other", "s"]);
    // v2's next tick brings the table in line with its code again (the row stayed, due and never advanced).
    await v2.tick({ budgetMs: 5_000 });
    expect(await rows()).toEqual(["other"]);
    // Two days on, v3 adds s back as it was: it starts afresh, unpaused, with no catch-up of the days before.
    w.set("2024-05-03T09:30:00Z");
    const v3 = w.make([hourly("s", { missed: { catchUp: 5 } }), hourly("other")]);
    const before = w.runs.filter((r) => r.startsWith("schedule:s:")).length;
    await tickThrough(v3, w, "2024-05-03T09:30:00Z", "2024-05-03T10:00:30Z", 10 * MIN);
    expect(w.runs.filter((r) => r.startsWith("schedule:s:")).slice(before)).toEqual(["schedule:s:2024-05-03T10:00:00.000Z"]);
    expect((await v3.schedules.list()).items.find((x) => x.name === "s")).toMatchObject({ paused: false });
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

  it("lists what the next tick enqueues of the overdue occurrences, by the missed policy, then those after now, when no tick ran for hours", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    const jobs = w.make([hourly("o"), hourly("o-latest", { missed: "latest" }), hourly("o-catch", { missed: { catchUp: 2 } })]);
    await jobs.tick({ budgetMs: 5_000 });
    const listed = async () => Object.fromEntries((await jobs.schedules.list({ next: 3 })).items.map((s) => [s.name, s.nextRuns.map((r) => r.slice(11, 16))]));
    // Within skip's grace, the overdue occurrence is still run.
    w.set("2024-05-01T10:03:00Z");
    expect((await listed()).o).toEqual(["10:00", "11:00", "12:00"]);
    w.set("2024-05-01T15:30:00Z");
    // Before: 10:00 for each, though the next tick skips it under "skip" (and the runs of the others are 15:00, or 14:00 and 15:00).
    expect(await listed()).toEqual({ o: ["16:00", "17:00", "18:00"], "o-latest": ["15:00", "16:00", "17:00"], "o-catch": ["14:00", "15:00", "16:00"] });
    await jobs.tick({ budgetMs: 5_000 });
    expect((await jobs.schedules.list({ next: 2 })).items[0]!.nextRuns).toEqual(["2024-05-01T16:00:00.000Z", "2024-05-01T17:00:00.000Z"]);
  });

  it("lists definitions with their next occurrences, description and last job", async () => {
    const w = await world("2024-03-10T05:30:00Z");
    const jobs = w.make([hourly("ny", { timezone: "America/New_York", missed: { catchUp: 3 } })]);
    const before = (await jobs.schedules.list({ next: 3 })).items;
    expect(before).toEqual([{
      name: "ny", cron: "0 * * * *", timezone: "America/New_York", job: "report", payload: { kind: "ny" },
      missed: { catchUp: 3 }, paused: false,
      nextRuns: ["2024-03-10T06:00:00.000Z", "2024-03-10T07:00:00.000Z", "2024-03-10T08:00:00.000Z"],
      lastEnqueuedAt: null, lastJobId: null, lastOccurrenceAt: null,
      description: "every hour at minute 0 (America/New_York)",
    }]);
  });
});

describe("pause, resume and run now on a machine whose clock is off", () => {
  it("compute the next occurrence from the database's clock: 10 minutes behind, it was in the past (occurrences ran again); ahead, ten were lost", async () => {
    const report = defineJob({ name: "report", schema: z.object({ kind: z.string() }), handler: () => {} });
    const make = (prefix: string) =>
      createJobs({ db: h.main, jobs: [report], schedules: [{ name: "m", cron: "* * * * *", job: "report", payload: { kind: "m" } }], settings: { tablePrefix: prefix } });
    // Every minute: the next occurrence is within the next minute of the database's clock.
    const next = async (prefix: string) =>
      (await h.rows<{ ok: boolean }>(`SELECT next_run_at > now() AND next_run_at <= now() + interval '61 seconds' AS ok FROM ${prefix}schedules WHERE name = 'm'`))[0]!.ok;
    const real = Date.now.bind(Date);
    const results: Record<string, boolean> = {};
    for (const [skew, offset] of [["behind", -10 * MIN], ["ahead", 10 * MIN]] as const) {
      const resumed = make(`skew_${skew}_a_`);
      const ran = make(`skew_${skew}_b_`);
      await resumed.migrate();
      await ran.migrate();
      await resumed.schedules.pause("m");
      const skewed = vi.spyOn(Date, "now").mockImplementation(() => real() + offset);
      try {
        await resumed.schedules.resume("m");
        await ran.schedules.run("m");
      } finally {
        skewed.mockRestore();
      }
      results[`resumed ${skew}`] = await next(`skew_${skew}_a_`);
      results[`ran ${skew}`] = await next(`skew_${skew}_b_`);
    }
    expect(results).toEqual({ "resumed behind": true, "ran behind": true, "resumed ahead": true, "ran ahead": true });
  });
});
