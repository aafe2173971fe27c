// When a rate window has room again is the database's instant; a tick whose own clock differs from the
// database's by seconds (another machine, a drifting VM) must wait by the database's clock: ahead, it
// claimed in a loop until its cutoff (3,093 statements in one review); behind, it waited too long.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("flow_clock_skew");

describe("rate windows and a clock that is not the database's", () => {
  it("a tick whose clock runs 30 s ahead waits for the window, instead of claiming again and again", async () => {
    const rated = defineJob({ name: "rated", schema: z.object({ n: z.number() }), rateLimit: { limit: 1, periodMs: 4_000 }, handler: () => {} });
    const jobs = await h.isolated([rated]);
    await jobs.enqueueMany([0, 1].map((n) => ({ job: "rated" as const, payload: { n } })));
    const real = Date.now;
    Date.now = () => real() + 30_000;
    try {
      const report = await jobs.tick({ budgetMs: 2_500, claimCutoffMs: 500 });
      expect(report.claimed).toBe(1);
      // Its claims, the settle and the final statement: the second job's window opens after the cutoff.
      expect(report.statements).toBeLessThanOrEqual(5);
    } finally {
      Date.now = real;
    }
  });
});
