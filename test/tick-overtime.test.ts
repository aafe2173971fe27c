// A run past its own timeout whose handler goes on: its job stays running until the handler returns
// (or the tick ends), so neither a per-key limit nor the job's own retry starts a second run beside it.
// And a thrown value that cannot even be inspected still settles its attempt.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("tick_overtime");

/** Start and end of each handler call, to find two that overlapped. */
const overlaps = (spans: Array<{ at: number; until: number }>) =>
  spans.some((a, i) => spans.some((b, j) => i !== j && a.at < b.until && b.at < a.until));

describe("a handler that ignores its timeout", () => {
  it("keeps a concurrency limit of one: the next job of the key starts only when it returns", async () => {
    const spans: Array<{ at: number; until: number }> = [];
    const stubborn = defineJob({
      name: "stubborn-limited",
      schema: z.object({ n: z.number() }),
      timeoutMs: 50,
      maxAttempts: 1,
      concurrency: { limit: 1 },
      handler: async () => {
        const at = Date.now();
        await sleep(400); // ignores ctx.signal
        spans.push({ at, until: Date.now() });
      },
    });
    const jobs = await h.isolated([stubborn], { claimIntervalMs: 20 });
    await jobs.enqueueMany([0, 1, 2].map((n) => ({ job: "stubborn-limited" as const, payload: { n } })));
    const report = await jobs.tick({ budgetMs: 8_000, concurrency: 5 });
    expect(report).toMatchObject({ claimed: 3, deadLettered: 3 });
    expect(spans).toHaveLength(3);
    expect(overlaps(spans)).toBe(false);
  });

  it("is not retried beside itself: its next attempt starts after it returns", async () => {
    const spans: Array<{ at: number; until: number }> = [];
    const stubborn = defineJob({
      name: "stubborn-retried",
      schema: z.object({}),
      timeoutMs: 50,
      maxAttempts: 2,
      backoff: { baseMs: 0, maxMs: 0 },
      handler: async () => {
        const at = Date.now();
        await sleep(400);
        spans.push({ at, until: Date.now() });
      },
    });
    const jobs = await h.isolated([stubborn], { claimIntervalMs: 20 });
    await jobs.enqueue("stubborn-retried", {});
    // The next tick (or this one) takes the retry as soon as the attempt is settled.
    const reports = [await jobs.tick({ budgetMs: 8_000, concurrency: 5 }), await jobs.tick({ budgetMs: 8_000, concurrency: 5 })];
    expect(reports.reduce((n, r) => n + r.claimed, 0)).toBe(2);
    expect(reports.reduce((n, r) => n + r.deadLettered, 0)).toBe(1);
    expect(spans).toHaveLength(2);
    expect(overlaps(spans)).toBe(false);
  });

  it("still running at the tick's end: its attempt is settled in the final statement", async () => {
    const never = defineJob({ name: "never-returns", schema: z.object({}), timeoutMs: 50, handler: () => new Promise(() => {}) });
    const jobs = await h.isolated([never], { claimCutoffMs: 200 });
    const { id } = await jobs.enqueue("never-returns", {});
    const report = await jobs.tick({ budgetMs: 700 });
    expect(report).toMatchObject({ claimed: 1, retried: 1, requeued: 0 });
    expect(await h.rows(`SELECT status, attempt, last_error FROM ${jobs.tables.queue} WHERE id = $1`, [id])).toEqual([
      { status: "queued", attempt: 1, last_error: "JobTimeout: timed out after 50 ms" },
    ]);
    // Its history row starts when the run did, though the attempt was settled at the tick's end.
    const [run] = await h.rows<{ span: number; duration_ms: number }>(
      `SELECT extract(epoch FROM finished_at - started_at) * 1000 AS span, duration_ms FROM ${jobs.tables.runs} WHERE job_id = $1`, [id]);
    expect(run!.duration_ms).toBeLessThan(200);
    expect(Number(run!.span)).toBeGreaterThan(400);
  });

  it("records its run as started when it started, though settled when the handler returned", async () => {
    const slow = defineJob({ name: "slow-return", schema: z.object({}), timeoutMs: 50, maxAttempts: 1, handler: () => sleep(600) });
    const jobs = await h.isolated([slow]);
    const { id } = await jobs.enqueue("slow-return", {});
    const before = Date.now();
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ deadLettered: 1 });
    const [run] = await h.rows<{ started: number; span: number; duration_ms: number }>(
      `SELECT extract(epoch FROM started_at) * 1000 AS started, extract(epoch FROM finished_at - started_at) * 1000 AS span, duration_ms
       FROM ${jobs.tables.runs} WHERE job_id = $1`, [id]);
    expect(run!.duration_ms).toBeLessThan(200);
    expect(Number(run!.span)).toBeGreaterThan(500);
    expect(Math.abs(Number(run!.started) - before)).toBeLessThan(300);
  });
});

describe("a thrown value that cannot be inspected", () => {
  it("a revoked Proxy fails the attempt like any error; the tick goes on", async () => {
    const hostile = defineJob({
      name: "revoked",
      schema: z.object({}),
      maxAttempts: 1,
      handler: () => {
        const r = Proxy.revocable({}, {});
        r.revoke();
        throw r.proxy;
      },
    });
    const jobs = await h.isolated([hostile]);
    const { id } = await jobs.enqueue("revoked", {});
    const report = await jobs.tick({ budgetMs: 3_000 });
    expect(report).toMatchObject({ claimed: 1, deadLettered: 1 });
    expect(await h.rows(`SELECT reason FROM ${jobs.tables.deadLetters} WHERE id = $1`, [id])).toEqual([{ reason: "exhausted" }]);
  });
});
