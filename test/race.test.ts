// Ticks racing on one queue over separate connections, and a stale tick that
// lost its lease: the lease token, not luck, decides who may write.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, PermanentJobError, type TickOptions } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("race");

describe("racing ticks", () => {
  it.each([2, 5])("%i ticks on separate connections: no job runs twice at once, each runs exactly once", async (ticks) => {
    const running = new Set<number>();
    let overlaps = 0;
    const effect = defineJob({
      name: "effect",
      schema: z.object({ n: z.number() }),
      handler: async ({ n }, ctx) => {
        if (running.has(n)) overlaps++;
        running.add(n);
        await sleep(n % 3);
        // The side effect, counted in the database.
        await h.db.query(`INSERT INTO race_effects_${ticks} (n, job_id) VALUES ($1, $2)`, [n, ctx.jobId]);
        running.delete(n);
      },
    });
    await h.db.query(`CREATE TABLE race_effects_${ticks} (n int NOT NULL, job_id uuid NOT NULL)`);
    const jobs = await h.isolated([effect]);
    const total = 300;
    await jobs.enqueueMany(Array.from({ length: total }, (_, n) => ({ job: "effect" as const, payload: { n } })));
    const tickers = Array.from({ length: ticks }, () => h.make([effect], { tablePrefix: jobs.settings.tablePrefix }, h.pool(3)));
    const reports = await Promise.all(tickers.map((t) => t.tick({ budgetMs: 30_000, concurrency: 8 })));
    const [effects] = await h.rows<{ n: number; distinct_n: number; distinct_jobs: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT n)::int AS distinct_n, count(DISTINCT job_id)::int AS distinct_jobs FROM race_effects_${ticks}`,
    );
    expect(effects).toEqual({ n: total, distinct_n: total, distinct_jobs: total });
    expect(overlaps).toBe(0);
    expect(reports.reduce((s, r) => s + r.succeeded, 0)).toBe(total);
    expect(reports.reduce((s, r) => s + r.leaseLost, 0)).toBe(0);
    // The claims really were shared out, not serialized behind one tick.
    expect(reports.filter((r) => r.claimed > 0).length).toBeGreaterThan(1);
    const [left] = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`);
    expect(left!.n).toBe(0);
  });
});

/**
 * A stale tick and an owner: the stale tick claims the job, stalls past its lease
 * (a frozen function, a GC pause), and another tick reclaims and runs it. Both runs
 * wait on gates: `release(0)` lets the stale run finish, `release(1)` the owner's.
 */
const staleAndOwner = async (staleTickOptions: TickOptions, finishStale: () => void = () => undefined) => {
  const gates: Array<() => void> = [];
  const attempts: number[] = [];
  const gated = defineJob({
    name: "gated",
    schema: z.object({}),
    handler: async (_p, ctx) => {
      attempts.push(ctx.attempt);
      await new Promise<void>((resolve) => gates.push(resolve));
      if (ctx.attempt === 1) finishStale();
    },
  });
  const stale = await h.isolated([gated]);
  const other = h.make([gated], { tablePrefix: stale.settings.tablePrefix }, h.pool(2));
  const { id } = await stale.enqueue("gated", {});
  const staleTick = stale.tick(staleTickOptions);
  await expect.poll(() => attempts.length).toBe(1);
  await h.db.query(`UPDATE ${stale.tables.queue} SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
  const otherTick = other.tick({ budgetMs: 20_000 });
  await expect.poll(() => attempts.length).toBe(2);
  return { id, stale, staleTick, otherTick, release: (i: number) => gates[i]!() };
};

describe("a stale tick whose lease another tick reclaimed", () => {
  const outcomes = [
    ["complete", () => undefined, "complete"],
    ["retry", () => { throw new Error("transient"); }, "retry"],
    ["dead-letter", () => { throw new PermanentJobError("permanent"); }, "dead-letter"],
  ] as const;

  it.each(outcomes)("cannot %s the job: zero rows change, `lease lost` is logged, the other run is unaffected", async (_label, finishStale, operation) => {
    const { id, stale, staleTick, otherTick, release } = await staleAndOwner({ budgetMs: 20_000 }, finishStale);
    const [owned] = await h.rows(`SELECT status, lease_owner, attempt FROM ${stale.tables.queue} WHERE id = $1`, [id]);
    expect(owned).toMatchObject({ status: "running", attempt: 2 });

    release(0); // the stale run finishes now
    const staleReport = await staleTick;
    expect(staleReport.leaseLost).toBe(1);
    expect(stale.logs.find((e) => e.msg === "lease lost")).toMatchObject({ jobId: id, operation: operation === "dead-letter" ? "dead-letter" : operation });
    expect((await h.rows(`SELECT status, lease_owner, attempt FROM ${stale.tables.queue} WHERE id = $1`, [id]))[0]).toEqual(owned);
    expect(await h.rows(`SELECT id FROM ${stale.tables.deadLetters}`)).toEqual([]);

    release(1); // the owner's run completes as usual
    expect(await otherTick).toMatchObject({ succeeded: 1, leaseLost: 0, reclaimed: 1 });
    expect(await h.rows(`SELECT id FROM ${stale.tables.queue}`)).toEqual([]);
  });

  it("cannot requeue the job at its deadline either", async () => {
    const { id, stale, staleTick, otherTick, release } = await staleAndOwner({ budgetMs: 1_500, claimCutoffMs: 200 });
    const staleReport = await staleTick; // its deadline passes while the other tick owns the job
    expect(staleReport).toMatchObject({ requeued: 0, leaseLost: 1 });
    expect(stale.logs.find((e) => e.msg === "lease lost")).toMatchObject({ jobId: id, operation: "requeue" });
    expect((await h.rows(`SELECT status, attempt FROM ${stale.tables.queue} WHERE id = $1`, [id]))[0]).toEqual({ status: "running", attempt: 2 });
    release(1);
    expect(await otherTick).toMatchObject({ succeeded: 1 });
    release(0);
  });
});

describe("racing operator calls on one queued job", () => {
  const later = defineJob({ name: "later", schema: z.object({}), handler: () => {} });
  const codeOf = (r: PromiseSettledResult<unknown>) => (r.status === "fulfilled" ? "ok" : (r.reason as { code?: string }).code);

  it("cancels at once: one cancels it, the others find it gone (never 'running')", async () => {
    const jobs = await h.isolated([later]);
    for (let round = 0; round < 10; round++) {
      const { id } = await jobs.enqueue("later", {}, { delayMs: 3_600_000 });
      const results = await Promise.allSettled(Array.from({ length: 6 }, () => jobs.cancel(id)));
      expect(results.map(codeOf).sort()).toEqual(["not_found", "not_found", "not_found", "not_found", "not_found", "ok"]);
    }
  });

  it("run-nows at once: each answers moved or due, none 'running'", async () => {
    const jobs = await h.isolated([later]);
    for (let round = 0; round < 10; round++) {
      const { id } = await jobs.enqueue("later", {}, { delayMs: 3_600_000 });
      const results = await Promise.allSettled(Array.from({ length: 4 }, () => jobs.run(id)));
      expect(results.map(codeOf)).toEqual(["ok", "ok", "ok", "ok"]);
      expect(results.some((r) => r.status === "fulfilled" && (r.value as { moved: boolean }).moved)).toBe(true);
      expect(await h.rows(`SELECT status, run_at <= now() AS due FROM ${jobs.tables.queue} WHERE id = $1`, [id])).toEqual([{ status: "queued", due: true }]);
    }
  });
});
