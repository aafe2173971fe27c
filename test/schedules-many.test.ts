// More schedules due at once than one read returns (500): a tick enqueues them all, statement after
// statement, each statement of a bounded size. It handled 500 and left the rest to the next tick, so
// with 2,000 schedules due each minute three in four occurrences were never run.
import { describe, expect, it } from "vitest";
import { JobsError } from "../src/index.js";
import { MIN, schedulesFixture } from "./support/schedules-fixture.js";

const { h, world } = await schedulesFixture("schedules_many");

describe("many schedules due at once", () => {
  it("enqueues every one of 1,200 due in the same minute in one tick", async () => {
    const w = await world("2024-05-01T09:59:30Z");
    const schedules = Array.from({ length: 1_200 }, (_, i) => ({ name: `m${i}`, cron: "* * * * *", job: "report", payload: { kind: `m${i}` } }));
    const jobs = w.make(schedules);
    await jobs.tick({ budgetMs: 20_000, concurrency: 1 });
    w.set("2024-05-01T10:00:05Z");
    await jobs.tick({ budgetMs: 20_000, concurrency: 1 });
    // Every schedule enqueued its 10:00 occurrence (some have run since).
    const [row] = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${w.t.schedules} WHERE last_occurrence_at = '2024-05-01T10:00:00Z'`);
    expect(row).toEqual({ n: 1_200 });
  }, 60_000);

  it("catches up a long outage in statements of bounded size (it was one of 10,800 jobs), each occurrence once", async () => {
    const w = await world("2024-05-01T08:00:30Z");
    const schedules = Array.from({ length: 60 }, (_, i) => ({ name: `c${i}`, cron: "* * * * *", job: "report", payload: { kind: `c${i}` }, missed: { catchUp: 200 } as const }));
    const jobs = w.make(schedules);
    await jobs.tick({ budgetMs: 20_000, concurrency: 1 });
    // Three hours later: 180 missed minutes each, 10,800 occurrences, more than one statement carries.
    w.advance(180 * MIN);
    // A tick goes on for a few seconds; what is left is the next one's.
    const reports = [];
    for (let i = 0; i < 4; i++) reports.push(await jobs.tick({ budgetMs: 20_000, concurrency: 1, claimForMs: 1 }));
    // At most 5,000 occurrences a statement (a schedule's own catch-up may pass it): three statements or more.
    expect(reports[0]!.statements).toBeGreaterThanOrEqual(1 + 3);
    const [row] = await h.rows<{ n: number; distinct: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT key)::int AS distinct FROM (
         SELECT idempotency_key AS key FROM ${w.t.queue} WHERE idempotency_key LIKE 'schedule:c%'
         UNION ALL SELECT idempotency_key FROM ${w.t.runs} WHERE idempotency_key LIKE 'schedule:c%') k`);
    // Each schedule's 180 missed minutes (08:01 to 11:00), once each.
    expect(row).toEqual({ n: 60 * 180, distinct: 60 * 180 });
  }, 60_000);

  // Listing them all at once was a page of 8.4 MB at 5,000 schedules, and ?next=100 took 31 s of CPU.
  it("lists 1,200 schedules a page at a time, by name, each once", async () => {
    const w = await world("2024-05-01T09:59:30Z");
    const names = Array.from({ length: 1_200 }, (_, i) => `p${String(1_199 - i).padStart(4, "0")}`);
    const jobs = w.make(names.map((name) => ({ name, cron: "*/5 * * * *", job: "report", payload: { kind: name } })));
    await jobs.tick({ budgetMs: 20_000, concurrency: 1 });
    await jobs.schedules.pause("p0051");
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; ; pages++) {
      const page = await jobs.schedules.list({ next: 2, cursor });
      expect(page.items.length).toBeLessThanOrEqual(50);
      seen.push(...page.items.map((s) => s.name));
      if (pages === 1) expect(page.items.find((s) => s.name === "p0051")).toMatchObject({ paused: true, nextRuns: [] });
      if (pages === 0) expect(page.items[0]).toMatchObject({ name: "p0000", paused: false, nextRuns: ["2024-05-01T10:00:00.000Z", "2024-05-01T10:05:00.000Z"] });
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual([...names].sort());
    // A page goes on after the last name it showed, even once a redeploy has removed that schedule.
    const first = await jobs.schedules.list({ limit: 10, next: 0 });
    const redeployed = w.make(names.filter((n) => n !== "p0009").map((name) => ({ name, cron: "*/5 * * * *", job: "report", payload: { kind: name } })));
    expect((await redeployed.schedules.list({ limit: 2, next: 0, cursor: first.nextCursor! })).items.map((s) => s.name)).toEqual(["p0010", "p0011"]);
    // Each next run costs the zone's arithmetic: a page computes at most 5,000 of them.
    await expect(jobs.schedules.list({ limit: 500, next: 11 })).rejects.toMatchObject({ code: "invalid_options", details: { field: "next" } });
    await expect(jobs.schedules.list({ limit: 501 })).rejects.toBeInstanceOf(JobsError);
    await expect(jobs.schedules.list({ cursor: "nope!" })).rejects.toMatchObject({ code: "invalid_options", details: { field: "cursor" } });
  }, 60_000);
});
