import { describe, expect, it } from "vitest";
import { z } from "zod";
import { countingDb, defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("retention");

const quick = defineJob({ name: "quick", schema: z.object({ i: z.number() }), handler: (p) => p.i });
const fails = defineJob({ name: "fails", schema: z.object({}), maxAttempts: 1, handler: () => { throw new Error("no"); } });

type J = { tables: { runs: string; metrics: string; deadLetters: string; housekeeping: string; queueMinutes: string; flow: string } };
const count = async (table: string, where = "true") => Number((await h.rows<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`))[0]!.n);
/** History rows as an old deployment left them: `n` runs that finished `days` ago. */
const oldRuns = (j: J, n: number, days: number) =>
  h.rows(`INSERT INTO ${j.tables.runs} (job_id, job_name, attempt, outcome, finished_at, duration_ms)
          SELECT gen_random_uuid(), 'quick', 1, 'succeeded', now() - ($2 || ' days')::interval + i * interval '1 millisecond', 5
          FROM generate_series(1, $1) i`, [n, String(days)]);
const busyTick = async (jobs: { enqueue: (n: "quick", p: { i: number }) => Promise<unknown>; tick: (o: { budgetMs: number }) => Promise<{ cleaned: unknown; durationMs: number }> }) => {
  await jobs.enqueue("quick", { i: 1 });
  return jobs.tick({ budgetMs: 5_000 });
};

describe("retention", () => {
  it("deletes old history in batches on busy ticks' final statements, going on at once while more than a batch is past due, then every few minutes", async () => {
    const jobs = await h.isolated([quick], { historyRetentionMs: 7 * 86_400_000 });
    await oldRuns(jobs, 12_000, 8);
    await oldRuns(jobs, 100, 6);
    expect((await busyTick(jobs)).cleaned).toMatchObject({ runs: 5_000 });
    expect((await busyTick(jobs)).cleaned).toMatchObject({ runs: 5_000 });
    expect((await busyTick(jobs)).cleaned).toMatchObject({ runs: 2_000 });
    // Caught up: the next cleanup waits.
    expect((await busyTick(jobs)).cleaned).toBeNull();
    expect(await count(jobs.tables.runs, "finished_at < now() - interval '7 days'")).toBe(0);
    expect(await count(jobs.tables.runs)).toBe(100 + 4);
    const [gate] = await h.rows<{ wait: number }>(`SELECT extract(epoch FROM next_at - now()) AS wait FROM ${jobs.tables.housekeeping}`);
    expect(Number(gate!.wait)).toBeGreaterThan(200);
  });

  it("goes on at once while more than a batch of old metrics or dead letters is past due, not only of history", async () => {
    const jobs = await h.isolated([quick, fails], { metricsRetentionMs: 86_400_000, deadLetterRetentionMs: 86_400_000 });
    await h.rows(`INSERT INTO ${jobs.tables.metrics} (minute, job_name, succeeded)
                  SELECT date_trunc('minute', now() - interval '2 days') - (i / 10) * interval '1 minute', 'j' || (i % 10), 1 FROM generate_series(1, 7000) i`);
    await h.rows(`INSERT INTO ${jobs.tables.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at)
                  SELECT gen_random_uuid(), 'fails', '{}', 1, 1, 0, 'exhausted', now() - interval '2 days' - i * interval '1 second', now() - interval '3 days'
                  FROM generate_series(1, 12000) i`);
    expect((await busyTick(jobs)).cleaned).toMatchObject({ metrics: 5_000, deadLetters: 5_000 });
    expect((await busyTick(jobs)).cleaned).toMatchObject({ metrics: 2_000, deadLetters: 5_000 });
    expect((await busyTick(jobs)).cleaned).toMatchObject({ metrics: 0, deadLetters: 2_000 });
    expect((await busyTick(jobs)).cleaned).toBeNull();
    expect(await count(jobs.tables.deadLetters)).toBe(0);
  });

  it("never cleans on an idle tick: it stays one statement", async () => {
    const db = countingDb(h.db);
    const jobs = await h.isolated([quick], {}, db);
    await oldRuns(jobs, 10, 8);
    db.statements = 0;
    const report = await jobs.tick({ budgetMs: 5_000 });
    expect(db.statements).toBe(1);
    expect(report.cleaned).toBeNull();
    expect(await count(jobs.tables.runs)).toBe(10);
  });

  it("keeps metrics for their own retention and dead letters until told", async () => {
    const jobs = await h.isolated([quick, fails], { metricsRetentionMs: 30 * 86_400_000 });
    await h.rows(`INSERT INTO ${jobs.tables.metrics} (minute, job_name, succeeded) SELECT date_trunc('minute', now()) - (i || ' days')::interval, 'quick', 1 FROM generate_series(1, 40) i`);
    await h.rows(`INSERT INTO ${jobs.tables.queueMinutes} (minute, due, running) SELECT date_trunc('minute', now()) - (i || ' days')::interval, 1, 0 FROM generate_series(1, 40) i`);
    await h.rows(`INSERT INTO ${jobs.tables.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at)
                  SELECT gen_random_uuid(), 'fails', '{}', 1, 1, 0, 'exhausted', now() - interval '400 days', now() - interval '400 days' FROM generate_series(1, 3)`);
    const report = await busyTick(jobs);
    // Days 30 to 40 of each: the day-30 row is a little older than 30 days (minutes are truncated).
    expect(report.cleaned).toMatchObject({ metrics: 22 });
    expect(await count(jobs.tables.metrics, "minute < now() - interval '30 days'")).toBe(0);
    expect(await count(jobs.tables.queueMinutes, "minute < now() - interval '30 days'")).toBe(0);
    expect(await count(jobs.tables.deadLetters)).toBe(3);

    const keeping = await h.isolated([quick, fails], { deadLetterRetentionMs: 90 * 86_400_000 });
    await h.rows(`INSERT INTO ${keeping.tables.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at)
                  SELECT gen_random_uuid(), 'fails', '{}', 1, 1, 0, 'exhausted', now() - (i * 60 || ' days')::interval, now() FROM generate_series(1, 3) i`);
    expect((await busyTick(keeping)).cleaned).toMatchObject({ deadLetters: 2 });
    expect(await count(keeping.tables.deadLetters)).toBe(1);
  });

  it("deletes rate windows unwritten for longer than a limit's longest window (a day), a batch at a time round the table", async () => {
    const rated = defineJob({ name: "rated", schema: z.object({ i: z.number() }), rateLimit: { limit: 5, periodMs: 1_000, key: (p) => String(p.i) }, handler: () => {} });
    const jobs = await h.isolated([quick, rated]);
    const windows = (prefix: string, n: number, age: string) =>
      h.rows(`INSERT INTO ${jobs.tables.flow} (bucket, starts, updated_at)
              SELECT $1 || lpad(i::text, 5, '0'), ARRAY[now() - $3::interval], now() - $3::interval FROM generate_series(1, $2) i`, [prefix, n, age]);
    await windows("r:j:rated:1000:f", 10, "1 second");
    await windows("r:j:rated:1000:s", 12_000, "2 days");
    await windows("r:j:rated:1000:t", 1, "23 hours");
    const due = () => h.rows(`UPDATE ${jobs.tables.housekeeping} SET next_at = now()`);
    // Bucket order: the fresh ones come first and stay, then the stale ones go, a batch looked at per cleanup.
    expect((await busyTick(jobs)).cleaned).toMatchObject({ flow: 4_990 });
    await due();
    expect((await busyTick(jobs)).cleaned).toMatchObject({ flow: 5_000 });
    await due();
    expect((await busyTick(jobs)).cleaned).toMatchObject({ flow: 2_010 });
    const left = await h.rows<{ bucket: string }>(`SELECT bucket FROM ${jobs.tables.flow} ORDER BY bucket`);
    expect(left.map((r) => r.bucket.slice(-6))).toEqual([...Array.from({ length: 10 }, (_, i) => `f${String(i + 1).padStart(5, "0")}`), "t00001"]);
    // Round the table: the next cleanup starts from the first bucket again.
    const [gate] = await h.rows<{ after: string }>(`SELECT flow_after AS after FROM ${jobs.tables.housekeeping}`);
    expect(gate!.after).toBe("");
    expect(await count(jobs.tables.flow)).toBe(11);
  });

  it("with history off, old history still goes; nothing new is written", async () => {
    const jobs = await h.isolated([quick], { historyRetentionMs: false });
    await oldRuns(jobs, 300, 1);
    expect((await busyTick(jobs)).cleaned).toMatchObject({ runs: 300 });
    expect(await count(jobs.tables.runs)).toBe(0);
  });

  it("cleans a large history while a drain runs, without holding any tick past its budget", async () => {
    const jobs = await h.isolated([quick], { concurrency: 20 });
    await oldRuns(jobs, 60_000, 10);
    await jobs.enqueueMany(Array.from({ length: 2_000 }, (_, i) => ({ job: "quick" as const, payload: { i } })));
    const budgetMs = 1_000;
    const reports = [];
    for (let i = 0; i < 40 && (await count(jobs.tables.runs, "finished_at < now() - interval '7 days'")) > 0; i++) {
      reports.push(await jobs.tick({ budgetMs, claimCutoffMs: 100 }));
      if (i % 3 === 0) await jobs.enqueueMany(Array.from({ length: 200 }, (_, k) => ({ job: "quick" as const, payload: { i: k } })));
    }
    expect(await count(jobs.tables.runs, "finished_at < now() - interval '7 days'")).toBe(0);
    const cleaned = reports.filter((r) => r.cleaned !== null);
    expect(cleaned.length).toBe(12);
    for (const r of cleaned) expect((r.cleaned as { runs: number }).runs).toBe(5_000);
    // The final statement carries the cleanup; it must not push a tick past its budget and the grace.
    for (const r of reports) expect(r.durationMs).toBeLessThan(budgetMs + jobs.settings.graceMs);
    expect(reports.reduce((n, r) => n + r.succeeded, 0)).toBeGreaterThan(2_000);
  });
});
