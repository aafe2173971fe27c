import { describe, expect, it } from "vitest";
import { z } from "zod";
import { countingDb, defineJob } from "../src/index.js";
import { getSeries } from "../src/store/admin/series.js";
import { tablesFor } from "../src/store/shared/tables.js";
import { buildStep } from "../src/store/tick/step.js";
import { housekeepingFor } from "../src/tick/housekeeping.js";
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

  it("deletes as much old history as twice the runs the tick claimed, so that a busy deployment's cleanup keeps up with what it writes", async () => {
    const jobs = await h.isolated([quick], { historyRetentionMs: 7 * 86_400_000, concurrency: 100 });
    await oldRuns(jobs, 12_000, 8);
    await jobs.enqueueMany(Array.from({ length: 4_000 }, (_, i) => ({ job: "quick" as const, payload: { i } })));
    const report = await jobs.tick({ budgetMs: 20_000 });
    expect(report.claimed).toBe(4_000);
    expect(report.cleaned).toMatchObject({ runs: 8_000 });
    // A tick that claimed little still deletes a batch of 5,000.
    expect((await busyTick(jobs)).cleaned).toMatchObject({ runs: 4_000 });
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

  it("folds per-minute metrics older than an hour and a quarter into quarter-hour rows, keeping every sum the charts and stats read", async () => {
    const jobs = await h.isolated([quick]);
    // Four hours of minutes for three jobs, with histograms and maxima that differ minute by minute.
    await h.rows(`INSERT INTO ${jobs.tables.metrics} (minute, job_name, succeeded, failed, retried, dead_lettered, requeued, duration_ms_sum, duration_ms_max, duration_hist)
                  SELECT date_trunc('minute', now()) - i * interval '1 minute', 'j' || k, i % 7, i % 3, i % 2, i % 5, k, i * 10 + k, (i * 37 + k) % 1000,
                         ARRAY[i % 4, k, 0, 0, 0, 0, 0, 0, 0, 0, 0, i % 2]
                  FROM generate_series(0, 239) i, generate_series(1, 3) k`);
    const series = async () => {
      const s = await getSeries(h.db, tablesFor(jobs.settings.tablePrefix), "24h");
      return { throughput: s.throughput, durations: s.durations };
    };
    const sums = `SELECT date_bin(interval '15 minutes', minute, timestamptz 'epoch') AS q, job_name, sum(succeeded)::int AS s, sum(failed)::int AS f,
                         sum(retried)::int AS r, sum(dead_lettered)::int AS d, sum(requeued)::int AS rq, sum(duration_ms_sum)::int AS ds,
                         max(duration_ms_max) AS mx, array_agg(duration_hist ORDER BY minute) AS hists
                  FROM ${jobs.tables.metrics} GROUP BY 1, 2 ORDER BY 1, 2`;
    const histTotals = `SELECT date_bin(interval '15 minutes', minute, timestamptz 'epoch') AS q, job_name, i, sum(duration_hist[i])::int AS n
                        FROM ${jobs.tables.metrics}, generate_series(1, 12) i GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
    // Leaving out the tick's own run, which adds a success in this minute.
    const own = (rows: Array<Record<string, unknown>>) => rows.filter((r) => r.job_name !== "quick" && r.job !== "quick");
    const before = { series: await series(), sums: (await h.rows<Record<string, unknown>>(sums)).map(({ hists: _, ...r }) => r), hist: await h.rows(histTotals) };
    const minutes = own((await jobs.stats()).minutes as never);

    await busyTick(jobs);
    const old = await h.rows<{ n: number; unaligned: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE minute <> date_bin(interval '15 minutes', minute, timestamptz 'epoch'))::int AS unaligned
       FROM ${jobs.tables.metrics} WHERE minute < now() - interval '90 minutes'`);
    expect(old[0]!.unaligned).toBe(0);
    expect(old[0]!.n).toBeGreaterThan(0);
    // The last hour and a quarter is still by the minute (the stats and the 1 h chart read it so).
    expect(await count(jobs.tables.metrics, "minute > now() - interval '74 minutes'")).toBeGreaterThanOrEqual(73 * 3);
    const after = { series: await series(), sums: (await h.rows<Record<string, unknown>>(sums)).map(({ hists: _, ...r }) => r), hist: await h.rows(histTotals) };
    expect(own(after.sums)).toEqual(own(before.sums));
    expect(own(after.hist)).toEqual(own(before.hist));
    expect({ throughput: own(after.series.throughput as never), durations: own(after.series.durations as never) }).toEqual({
      throughput: own(before.series.throughput as never), durations: own(before.series.durations as never),
    });
    expect(own((await jobs.stats()).minutes as never)).toEqual(minutes);
    // The overview's stats leave the minutes out (a row per job and minute; it draws the series instead), the rest alike.
    // (Their clocks aside: the two are read a moment apart.)
    const { minutes: left, now: _n, lastReport: _r, ...lean } = await jobs.stats({ minutes: false });
    const { minutes: all, now: _m, lastReport: _s, ...full } = await jobs.stats();
    expect({ left, lean }).toEqual({ left: [], lean: full });
    expect(all.length).toBeGreaterThan(0);
    const [gate] = await h.rows<{ folded: boolean }>(`SELECT metrics_folded_until <= now() - interval '75 minutes' AS folded FROM ${jobs.tables.housekeeping}`);
    expect(gate!.folded).toBe(true);
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
    // Bucket order: the fresh ones come first and stay, then the stale ones go, a batch looked at per cleanup;
    // while a full batch looked at finds stale ones, the next busy tick goes on at once.
    expect((await busyTick(jobs)).cleaned).toMatchObject({ flow: 4_990 });
    expect((await busyTick(jobs)).cleaned).toMatchObject({ flow: 5_000 });
    expect((await busyTick(jobs)).cleaned).toMatchObject({ flow: 2_010 });
    const left = await h.rows<{ bucket: string }>(`SELECT bucket FROM ${jobs.tables.flow} ORDER BY bucket`);
    expect(left.map((r) => r.bucket.slice(-6))).toEqual([...Array.from({ length: 10 }, (_, i) => `f${String(i + 1).padStart(5, "0")}`), "t00001"]);
    // Round the table: the next cleanup starts from the first bucket again.
    const [gate] = await h.rows<{ after: string }>(`SELECT flow_after AS after FROM ${jobs.tables.housekeeping}`);
    expect(gate!.after).toBe("");
    expect(await count(jobs.tables.flow)).toBe(11);
  });

  it("with history off, what was recorded before goes at the default retention, not at once; nothing new is written", async () => {
    const jobs = await h.isolated([quick], { historyRetentionMs: false });
    await oldRuns(jobs, 300, 8);
    await oldRuns(jobs, 200, 1);
    // Before: every run went at the first busy tick with history off, a day-old failure's record with them.
    expect((await busyTick(jobs)).cleaned).toMatchObject({ runs: 300 });
    expect(await count(jobs.tables.runs)).toBe(200);
  });

  it("finds the rows each cleanup deletes through an index or their TIDs, never by reading a whole table (a batch a few percent of it was a hash join over every row)", async () => {
    const jobs = await h.isolated([quick], { historyRetentionMs: 86_400_000, deadLetterRetentionMs: 86_400_000, metricsRetentionMs: 86_400_000 });
    const t = jobs.tables;
    await oldRuns(jobs, 300_000, 3);
    await h.rows(`INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
                  SELECT gen_random_uuid(), 'quick', '{}', 1, 1, 'failed', now() - interval '3 days', now() - interval '3 days' + i * interval '1 millisecond'
                  FROM generate_series(1, 200000) i`);
    await h.rows(`INSERT INTO ${t.metrics} (job_name, minute) SELECT 'j' || (i % 40), date_trunc('minute', now()) - interval '3 days' - (i / 40) * interval '1 minute'
                  FROM generate_series(1, 200000) i`);
    await h.rows(`ANALYZE ${t.runs}, ${t.deadLetters}, ${t.metrics}`);
    // The final statement of a tick that claimed 5,000 runs: a batch of 10,000 history rows and dead letters.
    const statement = buildStep(t, { housekeeping: housekeepingFor(jobs.settings, 5_000) })!;
    const [plan] = await h.rows<{ "QUERY PLAN": unknown }>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values);
    // Whole reads of the big tables (the small ones, such as an empty table of rate windows, may be read whole).
    const big = new Set([t.runs, t.deadLetters, t.metrics]);
    const scans: string[] = [];
    const walk = (node: Record<string, unknown>) => {
      const relation = String(node["Relation Name"] ?? "");
      if (node["Node Type"] === "Seq Scan" && big.has(relation)) scans.push(`Seq Scan ${relation}`);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk((plan!["QUERY PLAN"] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
    expect(scans).toEqual([]);
    const { cleaned } = await busyTick(jobs);
    expect(cleaned).toMatchObject({ runs: 5_000, deadLetters: 5_000, metrics: 5_000 });
    // Filling the tables is most of it: 21 s of 28 here, idle; past 30 s on a loaded machine.
  }, 120_000);

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
