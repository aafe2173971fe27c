import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { runBench } from "../bench/run.js";
import { render, type Results } from "../bench/report.js";

// The benchmark's numbers are not tested (speed is measured, not asserted);
// this checks that a tiny run drains every system for real and writes
// results.json in the documented shape.
const dir = mkdtempSync(join(tmpdir(), "pgtick-bench-smoke-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("npm run bench (tiny run)", () => {
  it("drains the same jobs through every system and writes results.json", async () => {
    process.env.DATABASE_URL = inject("databaseUrl");
    const out = join(dir, "results.json");
    const n = 200;
    const progress: string[] = [];
    const returned = await runBench(["--quick", "--n", String(n), "--runs", "1", "--concurrency", "10", "--out", out], (line) => void progress.push(line));
    const results = JSON.parse(readFileSync(out, "utf8")) as Results;
    expect(results).toEqual(JSON.parse(JSON.stringify(returned)));

    expect(results.runs).toBe(1);
    expect(results.n).toBe(n);
    expect(Object.keys(results.machine)).toEqual(expect.arrayContaining(["cpus", "node", "postgres"]));
    const systems = results.drain.map((d) => `${d.system}/${d.variant}`);
    expect(systems).toEqual([
      "ours/tick",
      "bare-sql/step loop",
      "pg-boss/batchSize = concurrency",
      "graphile-worker/localQueue = concurrency + 1",
      "graphile-worker/localQueue = 500",
    ]);
    for (const d of results.drain) {
      expect(d.concurrency).toBe(10);
      expect(d.jobsPerSec).toBeGreaterThan(0);
      expect(d.statementsPerJob).toBeGreaterThan(0);
    }
    // Ours claims all 10 slots at a time and settles each batch on a statement beside the next claim:
    // two statements per 10 jobs, plus the first claim, the final settle and a few where runs ended apart.
    const ours = results.drain.find((d) => d.system === "ours")!;
    expect(ours.statementsPerJob).toBeLessThanOrEqual(2 / 8 + 5 / n);
    expect(results.ratios).toEqual([expect.objectContaining({ concurrency: 10, vsBestPeer: expect.any(Number), vsBareSql: expect.any(Number) })]);

    expect(results.idleTick.statements).toBe(1);
    expect(results.idleTick.driverStatements).toBe(1);
    expect(results.enqueue.batchJobsPerSec).toBeGreaterThan(0);
    expect(results.enqueue.httpReqPerSec).toBeGreaterThan(0);
    expect(results.enqueue.httpSingleP50Ms).toBeGreaterThan(0);
    expect(results.enqueue.bulk.map((b) => b.system)).toEqual(["ours", "pg-boss", "graphile-worker"]);
    expect(results.latency.kickOn).toEqual(expect.objectContaining({ samples: 100, p50Ms: expect.any(Number) }));
    expect(results.latency.kickOff).toEqual(expect.objectContaining({ samples: 5, p50Ms: expect.any(Number) }));
    expect(results.goals.map((g) => g.goal)).toHaveLength(7);

    expect(progress.filter((line) => line.startsWith("run 1/1"))).toHaveLength(5);
    const table = render(results);
    for (const name of ["ours", "bare-sql", "pg-boss", "graphile-worker"]) expect(table).toContain(name);
  }, 150_000);
});
