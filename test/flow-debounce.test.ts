// A debounced job goes back to the queue (a retry, a requeue at the deadline, a reclaimed lease)
// while a newer job with the same debounce key waits: the two must not collide on the key.
// Once a job has run, the next enqueue with its key starts a new job, so the one going back
// to the queue gives its key up.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyJob, defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("flow_debounce");
const schema = z.object({ v: z.number() });
type Jobs = Awaited<ReturnType<typeof h.isolated<readonly AnyJob[]>>>;

const queued = (jobs: Jobs) =>
  h.rows<{ id: string; status: string; attempt: number; debounce_key: string | null; v: number }>(
    `SELECT id, status, attempt, debounce_key, (payload->>'v')::int AS v FROM ${jobs.tables.queue} ORDER BY (payload->>'v')::int`,
  );

/** The second enqueue with the key folds into the newer job, not the one that went back to the queue. */
const expectKeyOnNewer = async (jobs: Jobs, firstId: string) => {
  const again = await jobs.enqueue("deb", { v: 3 }, { debounce: { key: "k", delayMs: 60_000 } });
  expect(again.debounced).toBe(true);
  expect(again.id).not.toBe(firstId);
  const rows = await queued(jobs);
  expect(rows.map((r) => [r.id === firstId, r.status, r.debounce_key, r.v])).toEqual([
    [true, "queued", null, 1],
    [false, "queued", "k", 3],
  ]);
};

describe("debounce and a run that goes back to the queue", () => {
  it("a retry while a newer job with the key waits", async () => {
    let jobs!: Jobs;
    const deb = defineJob({
      name: "deb", schema, maxAttempts: 3, backoff: { baseMs: 60_000, maxMs: 60_000 },
      handler: async ({ v }) => {
        if (v !== 1) return;
        await jobs.enqueue("deb", { v: 2 }, { debounce: { key: "k", delayMs: 60_000 } });
        throw new Error("first attempt fails");
      },
    });
    jobs = await h.isolated([deb]);
    const first = await jobs.enqueue("deb", { v: 1 }, { debounce: { key: "k", delayMs: 0 } });
    const report = await jobs.tick({ budgetMs: 3_000 });
    expect(report).toMatchObject({ claimed: 1, retried: 1, leaseLost: 0 });
    await expectKeyOnNewer(jobs, first.id);
  });

  it("a requeue at the tick's deadline while a newer job with the key waits", async () => {
    let jobs!: Jobs;
    const deb = defineJob({
      name: "deb", schema,
      handler: async ({ v }, ctx) => {
        if (v !== 1) return;
        await jobs.enqueue("deb", { v: 2 }, { debounce: { key: "k", delayMs: 60_000 } });
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      },
    });
    jobs = await h.isolated([deb], { claimCutoffMs: 200 });
    const first = await jobs.enqueue("deb", { v: 1 }, { debounce: { key: "k", delayMs: 0 } });
    const report = await jobs.tick({ budgetMs: 1_000 });
    expect(report).toMatchObject({ claimed: 1, requeued: 1 });
    await expectKeyOnNewer(jobs, first.id);
  });

  it("a reclaimed lease while a newer job with the key waits (the next tick's first statement)", async () => {
    const deb = defineJob({ name: "deb", schema, handler: () => {} });
    const jobs = await h.isolated([deb]);
    const first = await jobs.enqueue("deb", { v: 1 }, { debounce: { key: "k", delayMs: 60_000 } });
    // A tick claimed it (as the last release's ticks do, keeping the key) and was killed.
    await h.rows(
      `UPDATE ${jobs.tables.queue} SET status = 'running', attempt = 1, lease_owner = gen_random_uuid(), lease_expires_at = now() - interval '1 second'
       WHERE id = $1`,
      [first.id],
    );
    const newer = await jobs.enqueue("deb", { v: 2 }, { debounce: { key: "k", delayMs: 60_000 } });
    expect(newer).toMatchObject({ debounced: false });
    const report = await jobs.tick({ budgetMs: 2_000 });
    expect(report).toMatchObject({ reclaimed: 1, succeeded: 1 });
    const again = await jobs.enqueue("deb", { v: 3 }, { debounce: { key: "k", delayMs: 60_000 } });
    expect(again).toMatchObject({ id: newer.id, debounced: true });
  });

  it("a claimed job holds no debounce key: an enqueue meanwhile starts a new job", async () => {
    let jobs!: Jobs;
    const keys: Array<string | null> = [];
    const deb = defineJob({
      name: "deb", schema,
      handler: async ({ v }, ctx) => {
        const [row] = await h.rows<{ debounce_key: string | null }>(`SELECT debounce_key FROM ${jobs.tables.queue} WHERE id = $1`, [ctx.jobId]);
        keys.push(row!.debounce_key);
        if (v === 1) await jobs.enqueue("deb", { v: 2 }, { debounce: { key: "k", delayMs: 60_000 } });
      },
    });
    jobs = await h.isolated([deb]);
    await jobs.enqueue("deb", { v: 1 }, { debounce: { key: "k", delayMs: 0 } });
    await jobs.tick({ budgetMs: 2_000 });
    expect(keys).toEqual([null]);
    expect((await queued(jobs)).map((r) => [r.v, r.debounce_key])).toEqual([[2, "k"]]);
  });
});

describe("debounce with maxWaitMs", () => {
  /** How long after its first enqueue the job is due, and its cap, in ms after created_at. */
  const waitOf = async (jobs: Jobs, id: string) =>
    (await h.rows<{ wait: number }>(`SELECT (extract(epoch FROM run_at - created_at) * 1000)::float8 AS wait FROM ${jobs.tables.queue} WHERE id = $1`, [id]))[0]!.wait;
  const capOf = async (jobs: Jobs, id: string) =>
    (await h.rows<{ cap: number | null }>(`SELECT (extract(epoch FROM debounce_until - created_at) * 1000)::float8 AS cap FROM ${jobs.tables.queue} WHERE id = $1`, [id]))[0]!.cap;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("keeps the job due no later than maxWaitMs after the enqueue that gave it, whatever later enqueues say; a later cap only brings it closer", async () => {
    const deb = defineJob({ name: "deb", schema, handler: () => {} });
    const jobs = await h.isolated([deb]);
    const first = await jobs.enqueue("deb", { v: 1 }, { debounce: { key: "k", delayMs: 60_000, maxWaitMs: 60_000 } });
    const cap = (await capOf(jobs, first.id))!;
    // Due 60 s from the statement, and capped there (created_at is its transaction's start, within a few ms).
    expect(await waitOf(jobs, first.id)).toBeCloseTo(cap, 2);
    expect(cap).toBeGreaterThanOrEqual(60_000);
    expect(cap).toBeLessThan(60_050);
    // Later enqueues, with the same cap, a longer one, or none: the job stays due at the first's cap
    // (without it, 60 s from each of them: 30 ms and more later each time).
    for (const [v, maxWaitMs] of [[2, 60_000], [3, 600_000], [4, undefined]] as const) {
      await pause(30);
      const again = await jobs.enqueue("deb", { v }, { debounce: { key: "k", delayMs: 60_000, maxWaitMs } });
      expect(again).toMatchObject({ id: first.id, debounced: true });
      expect(await waitOf(jobs, first.id)).toBeCloseTo(cap, 2);
      expect(await capOf(jobs, first.id)).toBeCloseTo(cap, 2);
    }
    // A shorter one brings the cap closer: 1 s from that enqueue.
    await jobs.enqueue("deb", { v: 5 }, { debounce: { key: "k", delayMs: 1_000, maxWaitMs: 1_000 } });
    const closer = (await capOf(jobs, first.id))!;
    expect(closer).toBeGreaterThan(1_090);
    expect(closer).toBeLessThan(cap - 50_000);
    expect(await waitOf(jobs, first.id)).toBeCloseTo(closer, 2);
    expect((await queued(jobs)).map((r) => r.v)).toEqual([5]);
  });

  it("gives a batch's repeats of a key the cap one enqueue after another would: the shortest of theirs, also for a job it creates", async () => {
    const deb = defineJob({ name: "deb", schema, handler: () => {} });
    const jobs = await h.isolated([deb]);
    const batch = (key: string, ...rows: Array<[delayMs: number, maxWaitMs?: number]>) =>
      jobs.enqueueMany(rows.map(([delayMs, maxWaitMs], v) => ({ job: "deb" as const, payload: { v }, debounce: { key, delayMs, maxWaitMs } })));
    // A cap, then none: the cap holds (it was lost: the batch sent only the last row).
    const [a] = await batch("a", [60_000, 120_000], [60_000]);
    expect(await capOf(jobs, a!.id)).toBeGreaterThanOrEqual(120_000);
    expect(await capOf(jobs, a!.id)).toBeLessThan(120_050);
    // A short cap, then a long one with a long delay: the short one holds, and the new job is due by it (not 60 s on).
    const [b] = await batch("b", [500, 1_000], [60_000, 600_000]);
    const capB = (await capOf(jobs, b!.id))!;
    expect(capB).toBeLessThan(1_050);
    expect(await waitOf(jobs, b!.id)).toBeCloseTo(capB, 2);
    // Again for a queued job of the key: the batch folds into it and brings its cap closer.
    await batch("a", [60_000], [1_000, 2_000], [60_000]);
    expect(await capOf(jobs, a!.id)).toBeLessThan(2_500);
    expect((await queued(jobs)).map((r) => r.v).sort()).toEqual([1, 2]);
  });

  it("counts the cap from the enqueue, not from the start of the caller's transaction", async () => {
    const deb = defineJob({ name: "deb", schema, handler: () => {} });
    const jobs = await h.isolated([deb]);
    const client = await h.main.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT 1");
      await pause(300);
      const first = await jobs.enqueue("deb", { v: 1 }, { debounce: { key: "k", delayMs: 1_000, maxWaitMs: 1_000 }, db: client });
      const [row] = (await client.query<{ wait: number; cap: number }>(
        `SELECT (extract(epoch FROM run_at - statement_timestamp()) * 1000)::float8 AS wait, (extract(epoch FROM debounce_until - statement_timestamp()) * 1000)::float8 AS cap
         FROM ${jobs.tables.queue} WHERE id = $1`, [first.id])).rows;
      // Both about 1 s from now; counted from the transaction's start, they would be 300 ms less.
      expect(row!.cap).toBeGreaterThan(900);
      expect(row!.wait).toBeCloseTo(row!.cap, 2);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
  });

  it("runs a key enqueued again more often than delayMs (it would wait forever without the cap), with the last payload", async () => {
    const seen: number[] = [];
    const deb = defineJob({ name: "deb", schema, handler: ({ v }) => void seen.push(v) });
    const jobs = await h.isolated([deb]);
    // Ticks one after another, as a cron and kicks would start them.
    let enqueuing = true;
    const ticking = (async () => {
      while (enqueuing) {
        await jobs.tick({ budgetMs: 2_000 });
        await pause(50);
      }
    })();
    let v = 0;
    // Every 100 ms, each moving the job 1 s on: only the cap lets it be due. The first enqueue of each series gives the cap.
    for (const until = Date.now() + 4_000; Date.now() < until && seen.length < 2; await pause(100)) {
      v++;
      await jobs.enqueue("deb", { v }, { debounce: { key: "k", delayMs: 1_000, ...(v === 1 || seen.length > 0 ? { maxWaitMs: 1_000 } : {}) } });
    }
    const ranWhileEnqueued = [...seen];
    enqueuing = false;
    await ticking;
    expect(ranWhileEnqueued.length).toBeGreaterThanOrEqual(1);
    // Each run took the payload of an enqueue that came after the one that queued the job.
    expect(ranWhileEnqueued[0]).toBeGreaterThan(1);
  });

  it("refuses a maxWaitMs below delayMs or not a number, and stores nothing; null is no cap", async () => {
    const deb = defineJob({ name: "deb", schema, handler: () => {} });
    const jobs = await h.isolated([deb]);
    for (const maxWaitMs of [999, 999.4, Number.NaN, Number.POSITIVE_INFINITY, "2000", 1e14, -1]) {
      const e = await jobs.enqueueUnchecked([{ job: "deb", payload: { v: 1 }, debounce: { key: "k", delayMs: 1_000, maxWaitMs } as never }]).catch((x: unknown) => x);
      expect(e).toMatchObject({ code: "invalid_options", details: { field: "debounce.maxWaitMs" } });
      expect((e as Error).message).toContain("delayMs (1000)");
    }
    expect(await queued(jobs)).toEqual([]);
    // Equal once stored to the millisecond: taken.
    const ok = await jobs.enqueueUnchecked([
      { job: "deb", payload: { v: 1 }, debounce: { key: "k", delayMs: 1_000.4, maxWaitMs: 1_000.3 } },
      { job: "deb", payload: { v: 2 }, debounce: { key: "j", delayMs: 1_000, maxWaitMs: null } as never },
    ]);
    expect(ok).toHaveLength(2);
    expect(await capOf(jobs, ok[1]!.id)).toBeNull();
  });
});
