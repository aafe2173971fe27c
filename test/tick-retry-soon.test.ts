// A tick that retries jobs with a short backoff claims them again when they come due before its
// cutoff, instead of returning with them queued until the next cron minute.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("retry_soon");

describe("retries that come due within the tick", () => {
  it("runs a retry due at once, and one due within the claim interval, in the same tick; one due later is left to the next tick", async () => {
    const seen = new Map<number, number>();
    const flaky = defineJob({
      name: "flaky",
      schema: z.object({ n: z.number() }),
      backoff: { baseMs: 0, maxMs: 0 },
      handler: ({ n }) => {
        const attempts = (seen.get(n) ?? 0) + 1;
        seen.set(n, attempts);
        if (attempts === 1) throw new Error("first attempt fails");
      },
    });
    const jobs = await h.isolated([flaky]);
    await jobs.enqueueMany(Array.from({ length: 20 }, (_, n) => ({ job: "flaky" as const, payload: { n } })));
    const report = await jobs.tick({ budgetMs: 10_000 });
    expect(report).toMatchObject({ retried: 20, succeeded: 20 });
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`)).toEqual([{ n: 0 }]);

    const slow = defineJob({
      name: "slow-retry",
      schema: z.object({}),
      // Jitter takes the harness's random 0.5: 225 ms.
      backoff: { baseMs: 300, maxMs: 300 },
      handler: (_, { attempt }) => {
        if (attempt === 1) throw new Error("first attempt fails");
      },
    });
    const later = await h.isolated([slow]);
    await later.enqueue("slow-retry", {});
    expect(await later.tick({ budgetMs: 10_000 })).toMatchObject({ retried: 1, succeeded: 1 });

    // Due in about 3 s with nothing else running: the tick does not sit idle for it.
    const distant = defineJob({ name: "distant-retry", schema: z.object({}), backoff: { baseMs: 4_000, maxMs: 4_000 }, handler: () => { throw new Error("fails"); } });
    const idle = await h.isolated([distant]);
    await idle.enqueue("distant-retry", {});
    expect(await idle.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, retried: 1 });
  });

  it("keeps a retry due soon when another run ends first and the claim that follows finds nothing", async () => {
    const fails = defineJob({
      name: "fails-once",
      schema: z.object({}),
      // Jitter takes the harness's random 0.5: 600 ms.
      backoff: { baseMs: 800, maxMs: 800 },
      handler: (_, { attempt }) => {
        if (attempt === 1) throw new Error("fails");
      },
    });
    const slow = defineJob({ name: "slow", schema: z.object({}), handler: () => sleep(300) });
    const jobs = await h.isolated([fails, slow], { claimIntervalMs: 1_000 });
    await jobs.enqueue("slow", {});
    await jobs.enqueue("fails-once", {});
    expect(await jobs.tick({ budgetMs: 20_000 })).toMatchObject({ retried: 1, succeeded: 2 });
    expect(await h.rows(`SELECT job_name FROM ${jobs.tables.queue}`)).toEqual([]);
  });

  it("does not sit idle for a retry further off than the claim interval once the runs beside it have ended", async () => {
    const fails = defineJob({ name: "fails-later", schema: z.object({}), backoff: { baseMs: 6_000, maxMs: 6_000 }, handler: () => { throw new Error("fails"); } });
    const slow = defineJob({ name: "slow", schema: z.object({}), handler: () => sleep(300) });
    const jobs = await h.isolated([fails, slow], { claimIntervalMs: 1_000 });
    await jobs.enqueue("slow", {});
    await jobs.enqueue("fails-later", {});
    // The retry is due in 4.5 s, inside the cutoff; with nothing left running the tick returns instead of waiting.
    expect(await jobs.tick({ budgetMs: 20_000 })).toMatchObject({ claimed: 2, retried: 1, succeeded: 1 });
  });

  it("waits for every retry it wrote, not only the first: two come due at different instants, both run", async () => {
    const twice = defineJob({
      name: "fails-first",
      schema: z.object({ waitMs: z.number() }),
      // Jitter takes the harness's random 0.5: 225 ms after each failure.
      backoff: { baseMs: 300, maxMs: 300 },
      handler: async ({ waitMs }, { attempt }) => {
        if (attempt > 1) return;
        await sleep(waitMs);
        throw new Error("fails");
      },
    });
    const jobs = await h.isolated([twice], { claimIntervalMs: 1_000 });
    await jobs.enqueue("fails-first", { waitMs: 0 });
    await jobs.enqueue("fails-first", { waitMs: 150 });
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ retried: 2, succeeded: 2 });
    expect(await h.rows(`SELECT job_name FROM ${jobs.tables.queue}`)).toEqual([]);
  });
});
