// How a tick stops: on its caller's signal, on a failed statement, at the claim cutoff; and rows another transaction holds.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Db, defineJob } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("tick_stops");

// Each test has its own tables (h.isolated), so rows from other tests never interfere.
type J = { tables: { queue: string; deadLetters: string } };
const queueRow = async (j: J, id: string) => (await h.rows(`SELECT * FROM ${j.tables.queue} WHERE id = $1`, [id]))[0];

describe("tick stops", () => {
  it("does not stop while a handler enqueues its successor: a chain of six runs in one tick, through the queue or the run's ctx.db", async () => {
    // In a transaction of the handler's own, committed before it returns: its wake came before the commit,
    // and the tick ended with the run, leaving the successor for the next cron tick.
    for (const through of ["queue", "ctx.db", "a transaction"] as const) {
      const ran: number[] = [];
      let jobs!: Awaited<ReturnType<typeof h.isolated<readonly [typeof link]>>>;
      const link = defineJob({
        name: "link",
        schema: z.object({ left: z.number() }),
        handler: async ({ left }, ctx) => {
          ran.push(left);
          if (left === 0) return;
          if (through !== "a transaction") return void (await jobs.enqueue("link", { left: left - 1 }, through === "ctx.db" ? { db: ctx.db } : {}));
          const client = await h.main.connect();
          try {
            await client.query("BEGIN");
            await jobs.enqueue("link", { left: left - 1 }, { db: client });
            // The claim its wake asked for has looked, and found nothing yet.
            await sleep(100);
            await client.query("COMMIT");
          } finally {
            client.release();
          }
          await sleep(50);
        },
      });
      jobs = await h.isolated([link], { claimIntervalMs: 60_000 });
      await jobs.enqueue("link", { left: 5 });
      const report = await jobs.tick({ budgetMs: 10_000 });
      expect({ through, ran, succeeded: report.succeeded }).toEqual({ through, ran: [5, 4, 3, 2, 1, 0], succeeded: 6 });
    }
  });

  it("stops claiming when the caller's signal aborts, requeueing what runs", async () => {
    const wait = defineJob({ name: "wait-signal", schema: z.object({}), handler: () => sleep(1_000) });
    const jobs = await h.isolated([wait]);
    const { id } = await jobs.enqueue("wait-signal", {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const report = await jobs.tick({ budgetMs: 30_000, signal: controller.signal });
    expect(report).toMatchObject({ claimed: 1, requeued: 1, requeuedIds: [id] });
    // Stopped on purpose, not at a deadline: a warning, not an error (a Ctrl-C of npm run dev logged an error).
    expect(jobs.logs.filter((e) => /requeueing running jobs/.test(e.msg))).toEqual([expect.objectContaining({ level: "warn", msg: "tick stopped: requeueing running jobs", jobIds: [id] })]);
  });

  it("gives a stopped run its attempt back: at its last attempt it goes back to the queue, not to the dead letters", async () => {
    const wait = defineJob({ name: "last-attempt", schema: z.object({}), maxAttempts: 1, handler: () => sleep(1_000) });
    const jobs = await h.isolated([wait]);
    const { id } = await jobs.enqueue("last-attempt", {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    // Before: a dead letter (reason deadline, 1 of 1 attempts), though a Ctrl-C said it was requeued.
    expect(await jobs.tick({ budgetMs: 30_000, signal: controller.signal })).toMatchObject({ requeued: 1, deadLettered: 0, requeuedIds: [id] });
    expect(await h.rows(`SELECT status, attempt, last_error FROM ${jobs.tables.queue}`)).toEqual([
      { status: "queued", attempt: 0, last_error: "the tick was stopped (a shutdown) before the run finished; requeued" },
    ]);
    // The run is in the history as the attempt it was; the job then runs, its one attempt unspent.
    expect(await h.rows(`SELECT outcome, attempt FROM ${jobs.tables.runs} WHERE job_id = $1`, [id])).toEqual([{ outcome: "requeued", attempt: 1 }]);
    expect(jobs.logs.filter((e) => e.msg === "job requeued at the deadline")).toEqual([]);
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1 });
  });

  it("claims nothing when the caller's signal was aborted before it started (no attempt spent)", async () => {
    let ran = 0;
    const job = defineJob({ name: "pre-aborted", schema: z.object({}), maxAttempts: 1, handler: () => void ran++ });
    const jobs = await h.isolated([job]);
    await jobs.enqueueMany([{ job: "pre-aborted", payload: {} }, { job: "pre-aborted", payload: {} }]);
    const controller = new AbortController();
    controller.abort();
    const report = await jobs.tick({ budgetMs: 5_000, signal: controller.signal });
    expect(report).toMatchObject({ claimed: 0, deadLettered: 0, requeued: 0, statements: 0 });
    expect(ran).toBe(0);
    expect(await h.rows(`SELECT status, attempt FROM ${jobs.tables.queue}`)).toEqual([{ status: "queued", attempt: 0 }, { status: "queued", attempt: 0 }]);
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ claimed: 2, succeeded: 2 });
  });

  it("when a statement fails mid-tick, keeps its runs going and sends again after a pause: nothing is requeued or run twice", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const quick = defineJob({ name: "quick", schema: z.object({}), handler: () => {} });
    const held = defineJob({ name: "held", schema: z.object({}), handler: () => gate });
    let statements = 0;
    // Fault injection in front of the real server: the third statement fails as a dropped connection would.
    const flaky: Db = {
      query: <R,>(text: string, params?: readonly unknown[]) =>
        ++statements === 3 ? Promise.reject(new Error("connection reset")) : h.db.query<R>(text, params),
    };
    const setup = await h.isolated([quick, held]);
    const jobs = h.make([quick, held], { tablePrefix: setup.settings.tablePrefix }, flaky);
    const { id: heldId } = await jobs.enqueue("held", {}, { priority: 1 });
    await jobs.enqueueMany([{ job: "quick", payload: {} }, { job: "quick", payload: {} }]);
    statements = 0;
    setTimeout(open, 600);
    const report = await jobs.tick({ budgetMs: 20_000, concurrency: 3, batchSize: 1 });
    expect(report).toMatchObject({ claimed: 3, succeeded: 3, requeued: 0, deadLettered: 0 });
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`)).toEqual([{ n: 0 }]);
    expect(await h.rows(`SELECT outcome, attempt FROM ${jobs.tables.runs} WHERE job_id = $1`, [heldId])).toEqual([{ outcome: "succeeded", attempt: 1 }]);
    expect(jobs.logs.filter((e) => e.msg === "tick statement failed")).toEqual([expect.objectContaining({ level: "error", error: "connection reset", retryInMs: 250 })]);
    expect(jobs.logs.filter((e) => /requeueing running jobs/.test(e.msg))).toEqual([]);
  });

  it("a final statement that fails is sent again after its pause within the grace: what it carries is written once", async () => {
    const once = defineJob({ name: "final-once", schema: z.object({}), maxAttempts: 1, handler: () => sleep(300) });
    let failFinal = true;
    // The final statement (it releases the slot) fails once, as a blip at the tick's end would.
    const blip: Db = {
      query: <R,>(text: string, params?: readonly unknown[]) => {
        if (failFinal && /finished_at = now\(\), reserved = /.test(text)) {
          failFinal = false;
          return Promise.reject(new Error("connection reset at the end"));
        }
        return h.db.query<R>(text, params);
      },
    };
    const setup = await h.isolated([once]);
    const jobs = h.make([once], { tablePrefix: setup.settings.tablePrefix }, blip);
    await jobs.enqueue("final-once", {});
    // The run goes past the deadline: the final statement requeues it (its one attempt spent: a dead letter).
    const report = await jobs.tick({ budgetMs: 150, claimCutoffMs: 0, graceMs: 3_000 });
    expect(failFinal).toBe(false);
    expect(report).toMatchObject({ claimed: 1, deadLettered: 1 });
    expect(jobs.logs.filter((e) => e.msg === "tick statement failed")).toEqual([expect.objectContaining({ error: "connection reset at the end", retryInMs: 250 })]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`)).toEqual([{ n: 0 }]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.ticks} WHERE expires_at > now()`)).toEqual([{ n: 0 }]);
  });

  it("while every statement fails, sends again at growing pauses until its deadline, then throws; the runs stay under their leases", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const held = defineJob({ name: "held-down", schema: z.object({}), handler: () => gate });
    let statements = 0;
    // The database goes away after the first statement (the claim) and stays away past the tick.
    const down: Db = {
      query: <R,>(text: string, params?: readonly unknown[]) =>
        ++statements > 1 ? Promise.reject(new Error("connection refused")) : h.db.query<R>(text, params),
    };
    const setup = await h.isolated([held]);
    const jobs = h.make([held], { tablePrefix: setup.settings.tablePrefix }, down);
    await jobs.enqueue("held-down", {});
    statements = 0;
    const started = Date.now();
    await expect(jobs.tick({ budgetMs: 2_500, claimCutoffMs: 0, graceMs: 1_000 })).rejects.toThrow("connection refused");
    open();
    // The first statement claimed; the claims for the free slots after it failed, at pauses of 250, 500
    // and 1,000 ms: a few statements, not a loop, then the final one, sent again within the grace, failed too.
    const failedAt = jobs.logs.filter((e) => e.msg === "tick statement failed").map((e) => e.retryInMs);
    expect(failedAt.slice(0, 3)).toEqual([250, 500, 1_000]);
    expect(statements).toBeLessThanOrEqual(9);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
    expect(await h.rows(`SELECT status, attempt FROM ${jobs.tables.queue}`)).toEqual([{ status: "running", attempt: 1 }]);
    // Its report line says it failed, not that it finished (an info line just before the error read as all well).
    expect(jobs.logs.filter((e) => e.msg === "tick finished")).toEqual([]);
    expect(jobs.logs.filter((e) => e.msg === "tick ended on a failed statement").map((e) => e.level)).toEqual(["warn"]);
  });

  it("skips a due row another transaction has locked instead of waiting for it (FOR UPDATE SKIP LOCKED)", async () => {
    const work = defineJob({ name: "lockable", schema: z.object({ n: z.number() }), handler: () => {} });
    const jobs = await h.isolated([work]);
    const { id: locked } = await jobs.enqueue("lockable", { n: 0 }, { priority: 10 });
    await jobs.enqueueMany([1, 2, 3].map((n) => ({ job: "lockable" as const, payload: { n } })));
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT id FROM ${jobs.tables.queue} WHERE id = $1 FOR UPDATE`, [locked]);
      // With a plain FOR UPDATE the claim would wait here until the holder lets go (after the tick).
      const report = await jobs.tick({ budgetMs: 5_000 });
      expect(report).toMatchObject({ claimed: 3, succeeded: 3 });
      expect(await queueRow(jobs, locked)).toMatchObject({ status: "queued", attempt: 0 });
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
  });

  it("stops claiming at the claim cutoff: a run is never started only to be requeued", async () => {
    const step = defineJob({ name: "step-600", schema: z.object({ n: z.number() }), handler: () => sleep(600) });
    const jobs = await h.isolated([step]);
    await jobs.enqueueMany(Array.from({ length: 10 }, (_, n) => ({ job: "step-600" as const, payload: { n } })));
    // One at a time, 600 ms each, claims at about 0, 600 and 1200 ms; at 1800 ms the cutoff (1500) has passed.
    // Without the cutoff it would claim at 1800 and 2400 and requeue the last one at the 3000 ms deadline.
    // (A loaded machine may send the third claim past 1500 ms: two claims, and still nothing requeued.)
    const report = await jobs.tick({ budgetMs: 3_000, claimCutoffMs: 1_500, concurrency: 1 });
    expect(report).toMatchObject({ succeeded: report.claimed, requeued: 0 });
    expect(report.claimed).toBeGreaterThanOrEqual(2);
    expect(report.claimed).toBeLessThanOrEqual(3);
    expect(report.durationMs).toBeLessThan(3_000);
  });
});
