// More schedules due at once than one read returns (500): a tick enqueues them all, statement after
// statement, each statement of a bounded size. It handled 500 and left the rest to the next tick, so
// with 2,000 schedules due each minute three in four occurrences were never run.
import { describe, expect, it } from "vitest";
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
});
