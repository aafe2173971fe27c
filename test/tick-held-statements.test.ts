// A tick whose statements are held up (a table locked by someone else): a claim that comes back after
// the deadline starts no handler and returns its jobs with their attempts (it started them, ran their
// side effects, then counted them as cut short); and a run's history starts when the run did, however
// long its settlement waited to go out.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("held_statements");

const lockFor = async (table: string, ms: number, mode = "ACCESS EXCLUSIVE") => {
  const client = new pg.Client({ connectionString: h.url });
  await client.connect();
  await client.query("BEGIN");
  await client.query(`LOCK TABLE ${table} IN ${mode} MODE`);
  // In an object: a promise returned from an async function would be awaited whole.
  return {
    done: (async () => {
      await sleep(ms);
      await client.query("COMMIT");
      await client.end();
    })(),
  };
};

describe("statements held up", () => {
  it("starts no handler for a claim that came back after the deadline, and returns its jobs with their attempts", async () => {
    let ran = 0;
    const charge = defineJob({ name: "charge", schema: z.object({}), maxAttempts: 1, handler: () => void ran++ });
    const jobs = await h.isolated([charge]);
    await jobs.enqueue("charge", {});
    await jobs.enqueue("charge", {});
    const lock = await lockFor(jobs.tables.queue, 1_500);
    const report = await jobs.tick({ budgetMs: 800, graceMs: 5_000 });
    await lock.done;
    expect(ran).toBe(0);
    // Nothing ran: no requeue is counted or recorded (a run of attempt 0 was, and a requeue in the metrics).
    // The report says where the claimed jobs went (claimed 2, and no outcome added up to it).
    expect(report).toMatchObject({ claimed: 2, succeeded: 0, deadLettered: 0, requeued: 0, requeuedIds: [], unstarted: 2 });
    const rows = await h.rows<{ status: string; attempt: number }>(`SELECT status, attempt FROM ${jobs.tables.queue}`);
    expect(rows).toEqual([{ status: "queued", attempt: 0 }, { status: "queued", attempt: 0 }]);
    expect(await h.rows(`SELECT 1 FROM ${jobs.tables.deadLetters}`)).toEqual([]);
    expect(await h.rows(`SELECT outcome, attempt FROM ${jobs.tables.runs}`)).toEqual([]);
    expect(await h.rows(`SELECT coalesce(sum(requeued), 0)::int AS n FROM ${jobs.tables.metrics}`)).toEqual([{ n: 0 }]);
    // Nor is it logged as a requeue at the deadline, an error an alert would page on.
    expect(jobs.logs.filter((e) => e.msg === "job requeued at the deadline")).toEqual([]);
    // They run at the next tick, once each.
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 2 });
    expect(ran).toBe(2);
    expect(await h.rows(`SELECT outcome, attempt FROM ${jobs.tables.runs}`)).toEqual([{ outcome: "succeeded", attempt: 1 }, { outcome: "succeeded", attempt: 1 }]);
  });

  it("records when a run started, not when its settlement could go out", async () => {
    const startedAt = new Map<string, number>();
    const work = defineJob({
      name: "work",
      schema: z.object({ ms: z.number() }),
      handler: async ({ ms }, ctx) => {
        startedAt.set(ctx.jobId, Date.now());
        await sleep(ms);
      },
    });
    const pool = h.pool(2);
    const jobs = await h.isolated([work], { concurrency: 3 }, pool);
    for (const ms of [100, 300, 800]) await jobs.enqueue("work", { ms });
    const ticking = jobs.tick({ budgetMs: 10_000 });
    await sleep(50);
    const lock = await lockFor(jobs.tables.runs, 2_500);
    await ticking;
    await lock.done;
    const runs = await h.rows<{ job_id: string; started_at: Date }>(`SELECT job_id, started_at FROM ${jobs.tables.runs}`);
    expect(runs).toHaveLength(3);
    for (const run of runs) {
      const handler = startedAt.get(run.job_id)!;
      expect(Math.abs(run.started_at.getTime() - handler), run.job_id).toBeLessThan(400);
    }
  });
});
