// How a tick uses its slots and statements: concurrency, batched settles beside the next claim, statements in flight, the idle tick, metrics.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { countingDb, type Db, type QueryOptions, defineJob, fromPg, resolveSettings } from "../src/index.js";
import { tickLimits } from "../src/tick/limits.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("tick_throughput");

// Each test has its own tables (h.isolated), so rows from other tests never interfere.
describe("tick throughput", () => {
  it("runs at most `concurrency` handlers at once and claims no more than its free slots", async () => {
    let inFlight = 0;
    let peak = 0;
    const busy = defineJob({
      name: "busy",
      schema: z.object({ i: z.number() }),
      handler: async () => {
        peak = Math.max(peak, ++inFlight);
        await sleep(5);
        inFlight--;
      },
    });
    const jobs = await h.isolated([busy]);
    await jobs.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ job: "busy" as const, payload: { i } })));
    const report = await jobs.tick({ budgetMs: 20_000, concurrency: 4 });
    expect(report.succeeded).toBe(60);
    expect(peak).toBe(4);
  });

  it("gives each run its own signal: many handlers listening at once set off no listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const listening = defineJob({
        name: "listening",
        schema: z.object({ i: z.number() }),
        handler: async (_p, ctx) => {
          ctx.signal.addEventListener("abort", () => {}); // as fetch(url, { signal }) does
          await sleep(20);
        },
      });
      const jobs = await h.isolated([listening]);
      await jobs.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ job: "listening" as const, payload: { i } })));
      expect(await jobs.tick({ budgetMs: 10_000, concurrency: 20 })).toMatchObject({ succeeded: 40 });
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next turn
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("settles in batches: far fewer statements than jobs", async () => {
    const noop = defineJob({ name: "noop-batch", schema: z.object({ i: z.number() }), handler: () => {} });
    const db = countingDb(h.db);
    const jobs = await h.isolated([noop], {}, db);
    await jobs.enqueueMany(Array.from({ length: 400 }, (_, i) => ({ job: "noop-batch" as const, payload: { i } })));
    db.statements = 0;
    const report = await jobs.tick({ budgetMs: 30_000, concurrency: 40 });
    expect(report.succeeded).toBe(400);
    expect(report.statements).toBe(db.statements);
    // A claim takes all the free slots by default (about 400 / 40 of them), and with two statements
    // at once the settlements of each batch go out on their own statement beside the next claim.
    expect(report.statements / 400).toBeLessThan(0.07);
  });

  it("settles a batch on its own statement while the next claim is out, not in the claim's", async () => {
    const noop = defineJob({ name: "noop-apart", schema: z.object({ i: z.number() }), handler: () => {} });
    const inner = fromPg(h.pool(3));
    const out = new Set<string>();
    const sent = { settle: 0, both: 0 };
    // Settles sent while the claim beside them was already out: the claim goes first.
    let settleAfterClaim = 0;
    const db: Db = {
      statementsAtOnce: inner.statementsAtOnce,
      async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
        const kind = text.includes("claimed AS (") ? (text.includes("completed AS (") ? "both" : "claim") : text.includes("completed AS (") ? "settle" : "other";
        const id = `${kind}:${Math.random()}`;
        out.add(id);
        if (kind === "settle" || kind === "both") sent[kind]++;
        if (kind === "settle" && [...out].some((o) => o.startsWith("claim:"))) settleAfterClaim++;
        try {
          const result = await inner.query<R>(text, params, options);
          await sleep(5);
          return result;
        } finally {
          out.delete(id);
        }
      },
    };
    const jobs = await h.isolated([noop], {}, db);
    await jobs.enqueueMany(Array.from({ length: 320 }, (_, i) => ({ job: "noop-apart" as const, payload: { i } })));
    const report = await jobs.tick({ budgetMs: 30_000, concurrency: 32 });
    expect(report.succeeded).toBe(320);
    // Ten batches of 32, settled a few at a time (pump-plan.test.ts says when), each settle sent just after a
    // claim (all but perhaps the last, when nothing is left to claim), and no claim carrying settlements.
    // A settle goes out once 128 are owed, and more pile up while it is out, so a slow machine may send
    // only two (128 + 192); never one, since the first goes while most of the 320 are yet to be claimed.
    expect(sent.settle).toBeGreaterThanOrEqual(2);
    expect(settleAfterClaim).toBeGreaterThanOrEqual(sent.settle - 1);
    expect(sent.both).toBe(0);
  });

  /**
   * Drains 128 jobs at concurrency 32 through `inner`, with every statement taking 40 ms more and
   * half the runs ending 15 ms after the others (while the first half's settle-and-claim is still
   * out). Returns the most statements that were out at once.
   */
  const mostOutAtOnce = async (name: string, inner: Db): Promise<number> => {
    const job = defineJob({
      name,
      schema: z.object({ i: z.number() }),
      handler: async (payload) => {
        if (payload.i % 2 === 1) await sleep(15);
      },
    });
    let out = 0;
    let most = 0;
    const db: Db = {
      statementsAtOnce: inner.statementsAtOnce,
      async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
        most = Math.max(most, ++out);
        try {
          const result = await inner.query<R>(text, params, options);
          await sleep(40);
          return result;
        } finally {
          out--;
        }
      },
    };
    const jobs = await h.isolated([job], {}, db);
    await jobs.enqueueMany(Array.from({ length: 128 }, (_, i) => ({ job: name, payload: { i } })));
    const report = await jobs.tick({ budgetMs: 30_000, concurrency: 32 });
    expect(report.succeeded).toBe(128);
    return most;
  };

  it("sends a second statement for the slots that free while one is out", async () => {
    expect(await mostOutAtOnce("noop-pipe", fromPg(h.pool(3)))).toBe(2);
  });

  it("claims all its free slots per statement by default, up to 256 MiB of payloads at their limit", () => {
    const s = resolveSettings({});
    const limits = (concurrency: number, statementsAtOnce?: number) => tickLimits(s, { concurrency }, statementsAtOnce);
    expect([1, 10, 16, 20, 32, 33, 100, 500].map((c) => limits(c).batchSize)).toEqual([1, 10, 16, 20, 32, 33, 100, 128]);
    expect(tickLimits(resolveSettings({ maxPayloadBytes: 65_536 }), { concurrency: 500 }).batchSize).toBe(500);
    expect([limits(100).inFlight, limits(100, 1).inFlight]).toEqual([2, 1]);
    expect(tickLimits(resolveSettings({ batchSize: 7 }), { concurrency: 32 }).batchSize).toBe(7);
    expect(tickLimits(resolveSettings({ batchSize: 70 }), { concurrency: 32 }).batchSize).toBe(32);
  });

  it("on a single connection keeps one statement in flight: a second one would only wait", async () => {
    const one = fromPg(h.pool(1));
    expect(one.statementsAtOnce).toBe(1);
    expect(await mostOutAtOnce("noop-one", one)).toBe(1);
  });

  it("an idle tick is one statement, returns early, and records that it ran", async () => {
    const db = countingDb(h.db);
    const jobs = await h.isolated([], {}, db);
    db.statements = 0;
    const [before] = await h.rows(`SELECT last_tick_at FROM ${jobs.tables.state}`);
    expect(before).toEqual({ last_tick_at: null });
    const report = await jobs.tick({ budgetMs: 60_000 });
    expect(db.statements).toBe(1);
    expect(report.statements).toBe(1);
    // It returned as soon as nothing was due, not at its 60 s deadline.
    expect(report.durationMs).toBeLessThan(10_000);
    const [state] = await h.rows<{ last_tick_at: Date | null }>(`SELECT last_tick_at FROM ${jobs.tables.state}`);
    expect(state!.last_tick_at).not.toBeNull();
  });

  it("records per-job metrics per minute and the last busy tick's report", async () => {
    let n = 0;
    const mixed = defineJob({ name: "mixed", schema: z.object({}), maxAttempts: 1, handler: () => { if (n++ % 2) throw new Error("odd"); } });
    const jobs = await h.isolated([mixed]);
    await jobs.enqueueMany(Array.from({ length: 6 }, () => ({ job: "mixed" as const, payload: {} })));
    const report = await jobs.tick({ budgetMs: 10_000, concurrency: 1 });
    expect(report).toMatchObject({ succeeded: 3, deadLettered: 3 });
    const [m] = await h.rows(`SELECT sum(succeeded)::int AS s, sum(failed)::int AS f, sum(dead_lettered)::int AS d FROM ${jobs.tables.metrics} WHERE job_name = 'mixed'`);
    expect(m).toEqual({ s: 3, f: 3, d: 3 });
    // The tick's slot row holds its report: counted once, in SQL, by each of its statements.
    const [row] = await h.rows(`SELECT slot, claimed, succeeded, dead_lettered, finished_at IS NOT NULL AS finished FROM ${jobs.tables.ticks} WHERE slot = $1`, [report.slot]);
    expect(row).toEqual({ slot: 1, claimed: 6, succeeded: 3, dead_lettered: 3, finished: true });
    expect(report).toMatchObject({ claimed: 6, slot: 1, capped: false });
  });
});
