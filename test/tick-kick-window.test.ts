// A tick started by an enqueue (the kick) claims only for JOBS_KICK_BUDGET, but what it started runs
// to the tick's budget: a job longer than the kick's window lost an attempt to every kick (cut at
// 10 s and requeued, dead at once with maxAttempts 1), where the cron tick would have let it finish.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, fromPg } from "../src/index.js";
import { runInvocationTick } from "../src/platform/invocation.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("kick_window");
let started: string[] = [];
const slow = defineJob({
  name: "slow",
  schema: z.object({ ms: z.number(), tag: z.string() }),
  maxAttempts: 1,
  handler: async ({ ms, tag }) => {
    started.push(tag);
    await sleep(ms);
  },
});

describe("the kick's claiming window", () => {
  it("lets a job it started run past the window, and claims nothing due after the window", async () => {
    const jobs = await h.isolated([slow]);
    started = [];
    await jobs.enqueue("slow", { ms: 1_500, tag: "first" });
    const ticking = jobs.tick({ budgetMs: 10_000, claimForMs: 400 });
    await sleep(700);
    const { id: later } = await jobs.enqueue("slow", { ms: 10, tag: "later" });
    const report = await ticking;
    expect(report).toMatchObject({ claimed: 1, succeeded: 1, requeued: 0, deadLettered: 0 });
    expect(started).toEqual(["first"]);
    expect((await jobs.get(later))?.status).toBe("queued");
  });

  it("through the platforms' shared invocation: a kick with JOBS_KICK_BUDGET of 1 s finishes a job of 2 s", async () => {
    const setup = await h.isolated([slow]);
    started = [];
    const { id } = await setup.enqueue("slow", { ms: 2_000, tag: "kicked" });
    const pool = new pg.Pool({ connectionString: h.url, max: 3 });
    try {
      const report = await runInvocationTick(
        {
          module: { jobs: [slow], settings: { tablePrefix: setup.settings.tablePrefix } },
          env: { JOBS_KICK_BUDGET: "1s" },
          platform: () => ({ limitMs: 20_000, marginMs: 5_000 }),
          connect: () => ({ db: fromPg(pool), close: async () => {} }),
        },
        { kick: true },
      );
      expect(report).toMatchObject({ claimed: 1, succeeded: 1, requeued: 0, deadLettered: 0 });
      expect((await setup.get(id))?.status).toBe("succeeded");
    } finally {
      await pool.end();
    }
  });
});


