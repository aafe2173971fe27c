// The charts' data (`getSeries`): one statement over the per-minute metrics and queue samples,
// summed into the range's buckets in SQL. Rows are written directly, as the tick would write them.
import { describe, expect, it } from "vitest";
import { isJobsError } from "../src/errors.js";
import { getSeries, RANGES, seriesRange, type SeriesRange } from "../src/store/admin/series.js";
import { getStats } from "../src/store/admin/stats.js";
import { percentile } from "../src/dashboard/charts/scale.js";
import { harness } from "./support/harness.js";

const h = await harness("dash_series");

const HOUR = 3_600_000;

/** A queue of its own, and the start of the range's first bucket as the database sees it. */
const setup = async (range: SeriesRange) => {
  const jobs = await h.isolated([]);
  const empty = await getSeries(jobs.db, jobs.tables, range);
  const metric = (at: number, job: string, n: { s?: number; r?: number; d?: number; q?: number; hist?: number[]; max?: number }) =>
    h.db.query(
      `INSERT INTO ${jobs.tables.metrics} (minute, job_name, succeeded, failed, retried, dead_lettered, requeued, duration_ms_max, duration_hist)
       VALUES ($1, $2, $3::int, $4::int + $5::int + $6::int, $4, $5, $6, $7, $8::int[])`,
      [new Date(at), job, n.s ?? 0, n.r ?? 0, n.d ?? 0, n.q ?? 0, n.max ?? 0, n.hist ?? Array(12).fill(0)],
    );
  const sample = (at: number, due: number, running: number, wait: number | null) =>
    h.db.query(`INSERT INTO ${jobs.tables.queueMinutes} (minute, due, running, oldest_wait_ms) VALUES ($1, $2, $3, $4)`, [new Date(at), due, running, wait]);
  return { jobs, start: Date.parse(empty.start), empty, metric, sample, read: () => getSeries(jobs.db, jobs.tables, range) };
};

describe("getSeries", () => {
  it("answers every range with its bucket size and count, the last bucket holding now", async () => {
    for (const range of Object.keys(RANGES) as SeriesRange[]) {
      const { empty } = await setup(range);
      const { bucketMs, buckets } = RANGES[range];
      expect(empty).toMatchObject({ range, bucketMs, buckets, totals: [], throughput: [], jobs: 0, queue: [], durations: [] });
      const start = Date.parse(empty.start);
      const now = Date.parse(empty.now);
      expect(start % bucketMs).toBe(0);
      expect(now - start).toBeGreaterThanOrEqual((buckets - 1) * bucketMs);
      expect(now - start).toBeLessThan(buckets * bucketMs);
    }
    expect(RANGES).toEqual({ "1h": { bucketMs: 60_000, buckets: 60 }, "24h": { bucketMs: 900_000, buckets: 96 }, "7d": { bucketMs: 7_200_000, buckets: 84 } });
  });

  it("sums the minutes of a 2 h bucket per job, and leaves out what is older than the range", async () => {
    const { start, metric, read } = await setup("7d");
    const b = 2 * HOUR;
    await metric(start + 3 * b, "a", { s: 2, r: 1 });
    await metric(start + 3 * b + 60_000, "a", { s: 5, d: 1, q: 2 });
    await metric(start + 3 * b + b - 60_000, "a", { s: 1 });
    await metric(start + 4 * b, "a", { s: 7 });
    await metric(start + 3 * b + 30 * 60_000, "b", { d: 4 });
    await metric(start - 60_000, "a", { s: 100 });
    const s = await read();
    const at = (k: number) => new Date(start + k * b).toISOString().replace("Z", "000Z");
    expect(s.throughput).toEqual([
      { at: at(3), job: "a", succeeded: 8, retried: 1, deadLettered: 1, requeued: 2 },
      { at: at(3), job: "b", succeeded: 0, retried: 0, deadLettered: 4, requeued: 0 },
      { at: at(4), job: "a", succeeded: 7, retried: 0, deadLettered: 0, requeued: 0 },
    ]);
    expect(s.totals).toEqual([
      { at: at(3), succeeded: 8, retried: 1, deadLettered: 5, requeued: 2 },
      { at: at(4), succeeded: 7, retried: 0, deadLettered: 0, requeued: 0 },
    ]);
    expect(s.jobs).toBe(2);
  });

  // Every job's points went to a page that draws a dozen: 14 MB and 3 s for the hour at 2,000 busy jobs.
  it("gives per bucket the busiest 12 jobs of the range and the totals of all, and the run times of the busiest 50", async () => {
    const { start, metric, read } = await setup("1h");
    for (let j = 1; j <= 60; j++) {
      for (const minute of [5, 30]) await metric(start + minute * 60_000, `job-${String(j).padStart(2, "0")}`, { s: j, hist: [j, ...Array(11).fill(0)], max: 5 });
    }
    const s = await read();
    expect(s.jobs).toBe(60);
    expect([...new Set(s.throughput.map((p) => p.job))]).toEqual(Array.from({ length: 12 }, (_, i) => `job-${49 + i}`));
    expect(s.totals.map((p) => p.succeeded)).toEqual([1830, 1830]);
    expect(s.durations.map((d) => d.job)).toEqual(Array.from({ length: 50 }, (_, i) => `job-${String(11 + i).padStart(2, "0")}`));
  });

  // stats().minutes gave every job's: 21 MB at 2,000 busy jobs, for the CLI to sum.
  it("stats give the minutes of the busiest 50 jobs of the hour", async () => {
    const { jobs, empty, metric } = await setup("1h");
    const minute = Date.parse(empty.now) - 120_000;
    for (let j = 1; j <= 60; j++) await metric(minute, `job-${String(j).padStart(2, "0")}`, { s: j });
    const { minutes } = await getStats(jobs.db, jobs.tables);
    expect(minutes.map((m) => m.job)).toEqual(Array.from({ length: 50 }, (_, i) => `job-${String(11 + i).padStart(2, "0")}`));
  });

  it("buckets 24 hours by 15 minutes and the last hour by the minute", async () => {
    const day = await setup("24h");
    await day.metric(day.start + 900_000, "a", { s: 1 });
    await day.metric(day.start + 900_000 + 14 * 60_000, "a", { s: 2 });
    await day.metric(day.start + 2 * 900_000, "a", { s: 4 });
    expect((await day.read()).throughput.map((p) => [Date.parse(p.at) - day.start, p.succeeded])).toEqual([
      [900_000, 3],
      [1_800_000, 4],
    ]);
    const hour = await setup("1h");
    await hour.metric(hour.start, "a", { s: 1 });
    await hour.metric(hour.start + 60_000, "a", { s: 2 });
    expect((await hour.read()).throughput.map((p) => p.succeeded)).toEqual([1, 2]);
  });

  it("keeps the highest queue depth and longest wait of each bucket", async () => {
    const { start, sample, read } = await setup("24h");
    await sample(start + 60_000, 5, 1, 2_000);
    await sample(start + 120_000, 9, 0, 500);
    await sample(start + 180_000, 2, 3, null);
    await sample(start + 900_000, 10_000, 2, null);
    const s = await read();
    expect(s.queue.map(({ due, running, oldestWaitMs }) => ({ due, running, oldestWaitMs }))).toEqual([
      { due: 9, running: 3, oldestWaitMs: 2_000 },
      { due: 10_000, running: 2, oldestWaitMs: null },
    ]);
  });

  it("adds up each job's duration histogram over the range, for its percentiles", async () => {
    const { start, metric, read } = await setup("1h");
    const hist = (at: number, n: number) => Array.from({ length: 12 }, (_, i) => (i === at ? n : 0));
    await metric(start, "fast", { s: 90, hist: hist(1, 90), max: 40 });
    await metric(start + 60_000, "fast", { s: 10, hist: hist(6, 10), max: 2_100 });
    await metric(start + 60_000, "slow", { s: 3, hist: hist(11, 3), max: 95_000 });
    const { durations } = await read();
    expect(durations).toEqual([
      { job: "fast", maxMs: 2_100, hist: hist(1, 90).map((n, i) => n + hist(6, 10)[i]!) },
      { job: "slow", maxMs: 95_000, hist: hist(11, 3) },
    ]);
    // 90 of 100 runs took at most 50 ms, the other 10 at most 2.5 s (and the slowest 2.1 s).
    expect(percentile(durations[0]!.hist, 2_100, 0.5)).toBe(50);
    expect(percentile(durations[0]!.hist, 2_100, 0.95)).toBe(2_100);
    expect(percentile(durations[1]!.hist, 95_000, 0.5)).toBe(95_000);
    expect(percentile(Array(12).fill(0), 0, 0.5)).toBeNull();
  });

  it("refuses a range it does not offer with invalid_options, naming the field", () => {
    expect(seriesRange(undefined)).toBe("1h");
    for (const bad of ["2h", "toString", "__proto__", "1H"]) {
      try {
        seriesRange(bad);
        throw new Error("accepted");
      } catch (e) {
        expect(isJobsError(e) && e.code === "invalid_options" && (e.details as { field: string }).field === "range").toBe(true);
      }
    }
  });
});
