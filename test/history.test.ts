import { describe, expect, it } from "vitest";
import { z } from "zod";
import { countingDb, defineJob, PermanentJobError } from "../src/index.js";
import { DURATION_BOUNDS_MS } from "../src/store/shared/duration-histogram.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("history");

type Run = Record<string, unknown> & { outcome: string; attempt: number };
const runsOf = async (j: { tables: { runs: string } }, jobId?: string) =>
  h.rows<Run>(`SELECT * FROM ${j.tables.runs} ${jobId ? "WHERE job_id = $1" : ""} ORDER BY id`, jobId ? [jobId] : []);

describe("run history", () => {
  it("records each attempt that ends, in the statement that settles it: succeeded with output, retried and dead with error and stack", async () => {
    let calls = 0;
    const flaky = defineJob({
      name: "flaky",
      schema: z.object({ n: z.number() }),
      maxAttempts: 3,
      backoff: { baseMs: 0 },
      handler: (p, ctx) => {
        ctx.log("info", "trying", { call: ++calls });
        if (calls === 1) throw new Error("upstream 503");
        if (p.n < 0) throw new PermanentJobError("negative");
        return { doubled: p.n * 2, at: new Date("2026-01-02T03:04:05Z") };
      },
    });
    const jobs = await h.isolated([flaky]);
    const a = await jobs.enqueue("flaky", { n: 21 }, { correlationId: "order-7", idempotencyKey: "k-1" });
    await jobs.tick({ budgetMs: 5_000 });
    await jobs.tick({ budgetMs: 5_000 });
    const b = await jobs.enqueue("flaky", { n: -1 });
    await jobs.tick({ budgetMs: 5_000 });
    const [retried, succeeded] = await runsOf(jobs, a.id);
    expect(retried).toMatchObject({ job_name: "flaky", attempt: 1, outcome: "retried", error: "upstream 503", output: null, correlation_id: "order-7", idempotency_key: "k-1", payload: null });
    expect(retried!.stack).toMatch(/^Error: upstream 503\n\s+at /);
    expect(retried!.logs).toEqual([expect.objectContaining({ level: "info", msg: "trying", fields: { call: 1 } })]);
    expect(succeeded).toMatchObject({ attempt: 2, outcome: "succeeded", error: null, stack: null, output: { doubled: 42, at: "2026-01-02T03:04:05.000Z" }, payload: { n: 21 } });
    expect(Number(succeeded!.duration_ms)).toBeGreaterThanOrEqual(0);
    expect(new Date(succeeded!.started_at as string).getTime()).toBeLessThanOrEqual(new Date(succeeded!.finished_at as string).getTime());
    const [dead] = await runsOf(jobs, b.id);
    expect(dead).toMatchObject({ outcome: "dead_lettered", error: "PermanentJobError: negative", payload: { n: -1 } });
    expect(dead!.stack).toContain("PermanentJobError: negative");
  });

  it("adds no statement: the same drain sends as many statements with history on as off", async () => {
    const quick = defineJob({ name: "quick", schema: z.object({ i: z.number() }), handler: (p) => ({ i: p.i }) });
    const count = async (history: boolean) => {
      // One connection's worth: one statement in flight, each settling what finished and claiming
      // all the slots, so the count does not depend on how long a batch of settlements was held.
      const db = countingDb({ ...h.db, statementsAtOnce: 1 });
      const jobs = await h.isolated([quick], { historyRetentionMs: history ? 86_400_000 : false, concurrency: 10 }, db);
      await jobs.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ job: "quick" as const, payload: { i } })));
      db.statements = 0;
      const report = await jobs.tick({ budgetMs: 5_000, batchSize: 10 });
      expect(report.succeeded).toBe(40);
      return { statements: db.statements, runs: (await runsOf(jobs)).length };
    };
    const on = await count(true);
    const off = await count(false);
    expect(on.runs).toBe(40);
    expect(off.runs).toBe(0);
    expect(on.statements).toBe(off.statements);
  });

  it("records a run requeued at the deadline and one reclaimed after its tick was killed", async () => {
    const slow = defineJob({ name: "slow", schema: z.object({}), handler: async (_p, ctx) => {
      ctx.log("info", "started");
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    } });
    const jobs = await h.isolated([slow]);
    const { id } = await jobs.enqueue("slow", {});
    await jobs.tick({ budgetMs: 300, claimCutoffMs: 100 });
    // A tick that died holding a run: its lease ran out.
    const dead = crypto.randomUUID();
    await h.rows(
      `INSERT INTO ${jobs.tables.queue} (id, job_name, payload, status, attempt, lease_owner, lease_expires_at, updated_at)
       VALUES ($1, 'slow', '{}', 'running', 1, gen_random_uuid(), now() - interval '1 second', now() - interval '2 minutes')`,
      [dead],
    );
    await jobs.tick({ budgetMs: 300, claimCutoffMs: 100 });
    const [requeued] = await runsOf(jobs, id);
    expect(requeued).toMatchObject({ outcome: "requeued", attempt: 1, error: expect.stringContaining("deadline") });
    expect(requeued!.logs).toEqual([expect.objectContaining({ msg: "started" })]);
    const [reclaimed] = await runsOf(jobs, dead);
    expect(reclaimed).toMatchObject({ outcome: "reclaimed", attempt: 1, duration_ms: null, error: expect.stringContaining("lease expired") });
    // It started when its claim stamped it.
    expect(Date.now() - new Date(reclaimed!.started_at as string).getTime()).toBeGreaterThan(100_000);
    // The minute's counts: the reclaimed attempt is among those requeued, so the categories add up to the failures
    // (it was a failure of no category, which the charts, drawing the categories, never showed).
    const minutes = (await jobs.stats()).minutes!.filter((m) => m.job === "slow");
    const sum = (k: "failed" | "retried" | "deadLettered" | "requeued") => minutes.reduce((n, m) => n + m[k], 0);
    const { rows: ended } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.runs} WHERE outcome IN ('requeued', 'reclaimed')`);
    expect({ failed: sum("failed"), parts: sum("retried") + sum("deadLettered") + sum("requeued"), requeued: sum("requeued") })
      .toEqual({ failed: ended[0]!.n, parts: ended[0]!.n, requeued: ended[0]!.n });
  });

  it("keeps what a handler returns storable and bounded: too large is marked truncated, never a failure", async () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const outputs: Record<string, unknown> = {
      big: { blob: "x".repeat(70_000) },
      nul: { text: "a\u0000b", ["k\u0000"]: "\uD800 lone" },
      bigint: { n: 12345678901234567890n },
      cyclic,
      throwing: { get boom() { throw new Error("getter"); } },
      nothing: undefined,
    };
    const returns = defineJob({ name: "returns", schema: z.object({ kind: z.string() }), handler: (p) => outputs[p.kind] });
    const jobs = await h.isolated([returns], { maxOutputBytes: 65_536 });
    const ids: Record<string, string> = {};
    for (const kind of Object.keys(outputs)) ids[kind] = (await jobs.enqueue("returns", { kind })).id;
    const report = await jobs.tick({ budgetMs: 5_000 });
    expect(report).toMatchObject({ succeeded: 6, retried: 0, deadLettered: 0 });
    const run = async (kind: string) => (await runsOf(jobs, ids[kind]))[0]!;
    expect(await run("big")).toMatchObject({ outcome: "succeeded", output: null, output_truncated: true });
    expect(await run("nul")).toMatchObject({ output: { text: "a\uFFFDb", "k\uFFFD": "\uFFFD lone" }, output_truncated: false });
    expect(await run("bigint")).toMatchObject({ output: { n: "12345678901234567890" } });
    expect(await run("cyclic")).toMatchObject({ output: { name: "loop", self: "[circular]" } });
    expect(await run("throwing")).toMatchObject({ output: null, output_truncated: true });
    expect(await run("nothing")).toMatchObject({ output: null, output_truncated: false });
  });

  it("clips a stack and bounds the log lines: the last 50, at most 16 KiB", async () => {
    const noisy = defineJob({
      name: "noisy",
      schema: z.object({}),
      maxAttempts: 1,
      handler: (_p, ctx) => {
        for (let i = 0; i < 80; i++) ctx.log("debug", `line ${i}`, { i });
        ctx.log("warn", "huge", { blob: "y".repeat(40_000) });
        const e = new Error("deep");
        e.stack = `Error: deep\n${"    at frame (file.ts:1:1)\n".repeat(2_000)}`;
        throw e;
      },
    });
    const jobs = await h.isolated([noisy]);
    const { id } = await jobs.enqueue("noisy", {});
    await jobs.tick({ budgetMs: 5_000 });
    const [run] = await runsOf(jobs, id);
    const logs = run!.logs as Array<{ msg: string; fields?: Record<string, unknown> }>;
    // Exactly the last 50 of the 81 lines: lines 31 to 79, then the one whose fields were dropped.
    expect(logs).toHaveLength(50);
    expect(logs[0]).toMatchObject({ msg: "line 31" });
    expect(Buffer.byteLength(JSON.stringify(logs))).toBeLessThanOrEqual(16_384 + 50 * 4);
    expect(logs.at(-1)).toMatchObject({ msg: "huge", fields: { fieldsDropped: true } });
    expect(logs.at(-2)).toMatchObject({ msg: "line 79" });
    // Clipped at 16,000 characters, not shorter (the stack was 56,000).
    expect((run!.stack as string).length).toBeLessThanOrEqual(16_000);
    expect((run!.stack as string).length).toBeGreaterThan(15_000);
    expect(run!.stack as string).toMatch(/^Error: deep\n/);
  });

  it("checks the return value against the job's output schema: a mismatch fails the attempt, a match is stored parsed", async () => {
    const typed = defineJob({
      name: "typed",
      schema: z.object({ ok: z.boolean() }),
      output: z.object({ total: z.number().transform((n) => Math.round(n)) }),
      maxAttempts: 2,
      backoff: { baseMs: 0 },
      handler: (p) => (p.ok ? { total: 41.6 } : ({ total: "many" } as unknown as { total: number })),
    });
    const jobs = await h.isolated([typed]);
    const good = await jobs.enqueue("typed", { ok: true });
    const bad = await jobs.enqueue("typed", { ok: false });
    await jobs.tick({ budgetMs: 5_000 });
    expect((await runsOf(jobs, good.id))[0]).toMatchObject({ outcome: "succeeded", output: { total: 42 } });
    const [failed] = await runsOf(jobs, bad.id);
    expect(failed).toMatchObject({ outcome: "retried", output: null });
    expect(failed!.error).toMatch(/^OutputMismatch: the return value does not match the output schema of typed: \[.*"path":\["total"\]/);
  });

  it("records nothing with history off", async () => {
    const quick = defineJob({ name: "quick", schema: z.object({}), handler: () => 1 });
    const jobs = await h.isolated([quick], { historyRetentionMs: false });
    await jobs.enqueue("quick", {});
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1 });
    expect(await runsOf(jobs)).toEqual([]);
  });

  it("adds each run's duration to the minute's histogram and records the queue once a minute", async () => {
    const sleepy = defineJob({ name: "sleepy", schema: z.object({ ms: z.number() }), handler: (p) => sleep(p.ms) });
    const jobs = await h.isolated([sleepy], { concurrency: 10 });
    await jobs.enqueueMany([0, 0, 60, 60, 60, 120].map((ms) => ({ job: "sleepy" as const, payload: { ms } })));
    await jobs.enqueue("sleepy", { ms: 0 }, { delayMs: 3_600_000 });
    const minuteNow = async () => (await h.rows<{ m: string }>(`SELECT date_trunc('minute', now())::text AS m`))[0]!.m;
    const before = await minuteNow();
    const first = await jobs.tick({ budgetMs: 5_000 });
    expect(first.queue).toMatchObject({ due: 6, running: 0 });
    expect(first.queue!.oldestWaitMs).toBeGreaterThanOrEqual(0);
    const second = await jobs.tick({ budgetMs: 5_000 });
    // The second tick of the minute finds it recorded and counts nothing (unless the minute turned in between).
    if ((await minuteNow()) === before) expect(second.queue).toBeNull();
    expect(await h.rows(`SELECT due, running FROM ${jobs.tables.queueMinutes} WHERE minute = $1::timestamptz`, [before])).toEqual([{ due: 6, running: 0 }]);
    // Summed over the minutes: runs settled on both sides of a minute's turn count in two rows.
    const rows = await h.rows<{ duration_hist: number[] }>(`SELECT duration_hist FROM ${jobs.tables.metrics} WHERE job_name = 'sleepy'`);
    const hist = rows.reduce<number[]>((sum, r) => r.duration_hist.map((n, i) => n + (sum[i] ?? 0)), []);
    // Each run in the bucket of the duration its history row records (a loaded machine makes runs longer, never shorter)...
    const runs = await h.rows<{ duration_ms: number }>(`SELECT duration_ms FROM ${jobs.tables.runs} WHERE job_name = 'sleepy'`);
    const expected = Array.from({ length: DURATION_BOUNDS_MS.length + 1 }, () => 0);
    for (const { duration_ms } of runs) expected[DURATION_BOUNDS_MS.filter((b) => duration_ms >= b).length]!++;
    expect(hist).toEqual(expected);
    // ...and those durations about what each handler slept, or more: 50-100 ms or above for 60 ms, 100-250 ms or above for 120 ms.
    expect(runs.map((r) => r.duration_ms).sort((a, b) => a - b).slice(2).every((ms) => ms >= 50)).toBe(true);
    expect(hist.slice(3).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(hist.reduce((a, b) => a + b, 0)).toBe(6);
  });
});
