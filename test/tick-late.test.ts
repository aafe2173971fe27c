// A handler that outlives its tick: the final statement requeues its job, so its late result would only
// be fenced out and is not sent; when the final statement failed, the late result goes out only within
// what is left of the grace, so the tick's connection can close before the platform's limit.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, type Db, defineJob, fromPg, memoryLogger } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("tick_late");

/** The real database, recording each statement's bound; `failAfter` makes every statement sent after that instant fail. */
const recording = () => {
  const base = fromPg(h.main);
  const sent: Array<{ at: number; timeoutMs: number | undefined }> = [];
  const state = { failAfter: Number.POSITIVE_INFINITY };
  const db: Db = {
    query: async (text, params, opts) => {
      sent.push({ at: Date.now(), timeoutMs: opts?.timeoutMs });
      if (Date.now() >= state.failAfter) throw new Error("connection lost");
      return base.query(text, params, opts);
    },
  };
  return { db, sent, state };
};

let prefixes = 0;
const queueWith = async (db: Db, ms: number) => {
  const stubborn = defineJob({ name: "stubborn", schema: z.object({}), handler: () => sleep(ms) });
  const logger = memoryLogger();
  const jobs = createJobs({ db, jobs: [stubborn], settings: { tablePrefix: `late${++prefixes}_`, leaseMarginMs: 1_000 }, logger });
  await jobs.migrate();
  await jobs.enqueue("stubborn", {});
  return { jobs, logs: logger.entries };
};

describe("late results", () => {
  it("sends nothing for a run the final statement requeued", async () => {
    const { db, sent } = recording();
    const { jobs, logs } = await queueWith(db, 900);
    const report = await jobs.tick({ budgetMs: 500, graceMs: 2_000 });
    expect(report.requeuedIds).toHaveLength(1);
    const atEnd = sent.length;
    await sleep(800);
    expect(sent.length).toBe(atEnd);
    // Requeued by the tick's own final statement, as its log said: not a lease lost to another tick.
    // At warn: the handler ignored its abort and did its work, and the job runs again (it was only at debug).
    expect(logs.find((e) => e.msg === "late result dropped: the run was requeued at the tick's end")).toMatchObject({ level: "warn", late: true, operation: "complete" });
    expect(logs.some((e) => e.msg === "lease lost")).toBe(false);
    expect(await h.rows(`SELECT status, attempt FROM ${jobs.tables.queue}`)).toEqual([{ status: "queued", attempt: 1 }]);
  });

  it("after a failed final statement (sent again while the grace lasts), sends a late result bounded by the grace left, and none once it is spent", async () => {
    for (const [graceMs, finishesAfterMs, sends] of [[2_000, 700, true], [300, 900, false]] as const) {
      const { db, sent, state } = recording();
      const { jobs, logs } = await queueWith(db, finishesAfterMs);
      const deadline = Date.now() + 500;
      // A little before the tick's own deadline: a timer may fire a millisecond early, and the final statement then went
      // out (and succeeded) just before a cut-off at the deadline itself. Nothing else goes out in the last 50 ms.
      state.failAfter = deadline - 50;
      await expect(jobs.tick({ budgetMs: 500, graceMs })).rejects.toThrow("connection lost");
      await sleep(finishesAfterMs);
      const after = sent.filter((s) => s.at >= state.failAfter);
      // Nothing goes out past the grace: the final statement at its pauses (250, 500, 1,000 ms), then the late result.
      expect(after.every((s) => s.at < deadline + graceMs + 50)).toBe(true);
      if (sends) {
        // The final statement again and again (at about 500, 750, 1,250 and 2,250 ms), then the run's late result.
        expect(after.length).toBeGreaterThanOrEqual(4);
        const late = after.at(-1)!;
        expect(late.timeoutMs).toBeLessThanOrEqual(deadline + graceMs - late.at + 50);
        expect(logs.find((e) => e.msg === "late settlement not written")).toMatchObject({ error: "connection lost" });
      } else {
        // The final statement (at about 500 and 750 ms: the next pause passes the grace), and no late result.
        expect(after.length).toBeGreaterThanOrEqual(1);
        expect(after.length).toBeLessThanOrEqual(2);
        expect(logs.find((e) => e.msg === "late settlement not written")).toMatchObject({ late: true, error: "no time left before the platform's limit" });
      }
    }
  });
});
