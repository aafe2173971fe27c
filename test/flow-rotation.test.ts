// The round-robin over keys goes on from tick to tick: keys late in key order are reached even when
// each tick can look at only some of the keys, because the keys before them hold nothing due
// (delayed or debounced jobs). Before, every tick started again from the first key.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("flow_rotation");
const tenant = z.object({ tenant: z.string() });

describe("the round-robin over keys across ticks", () => {
  it("reaches a due key behind 300 keys with nothing due in one tick, claiming again at once while keys are left", async () => {
    const ran: string[] = [];
    const work = defineJob({ name: "rot", schema: tenant, concurrency: { limit: 1, key: (p) => p.tenant }, handler: ({ tenant: t }) => void ran.push(t) });
    // A claim interval far longer than a claim: a tick that waited for it between claims would reach no more
    // than three claims' keys before its cutoff, however slow the machine (its window was 450 ms, and a loaded
    // machine's ten back-to-back claims passed it).
    const jobs = await h.isolated([work], { claimIntervalMs: 5_000 });
    await jobs.enqueueMany(Array.from({ length: 300 }, (_, i) => ({ job: "rot" as const, payload: { tenant: `k${String(i).padStart(3, "0")}` }, delayMs: 3_600_000 })));
    await jobs.enqueue("rot", { tenant: "zz-due-now" });
    // A claim looks at 32 keys; one cut short before the end of the keys is followed by the next at once
    // (before migration 023, at the claim interval: three claims a tick, a third of the keys).
    let ticks = 0;
    while (ran.length === 0 && ticks < 8) {
      ticks++;
      await jobs.tick({ budgetMs: 20_000, claimCutoffMs: 10_000, concurrency: 4 });
    }
    expect(ran).toEqual(["zz-due-now"]);
    expect(ticks).toBe(1);
    // Where the last tick's round-robin ended is stored for the next.
    expect(await h.rows(`SELECT flow_cursor IS NOT NULL AS stored FROM ${jobs.tables.state}`)).toEqual([{ stored: true }]);
    // Now nothing is due: a tick is one statement, however many keys hold delayed jobs.
    expect(await jobs.tick({ budgetMs: 900, claimCutoffMs: 450, concurrency: 4 })).toMatchObject({ claimed: 0, statements: 1 });
  });

  const fairJob = z.object({ tenant: z.string(), n: z.number() });
  const perTenant = (p: { tenant: string }) => p.tenant;
  it.each([
    ["a rate limit per tenant under a group limit", { rateLimit: [{ limit: 100, periodMs: 1_000, key: perTenant }, { limit: 2, periodMs: 300, group: "provider" }] }],
    ["a concurrency limit per tenant under a job-wide rate limit", { concurrency: { limit: 5, key: perTenant }, rateLimit: { limit: 2, periodMs: 300 } }],
  ] as const)("a limit the tenants share lets each tenant's jobs through in turn: %s", async (_label, limits) => {
    const ran: string[] = [];
    const job = defineJob({ name: "fair", schema: fairJob, ...limits, handler: ({ tenant }) => void ran.push(tenant) });
    const jobs = await h.isolated([job], { claimIntervalMs: 20 });
    await jobs.enqueueMany(Array.from({ length: 100 }, (_, n) => ({ job: "fair" as const, payload: { tenant: "a", n } })));
    await jobs.enqueueMany(Array.from({ length: 3 }, (_, n) => ({ job: "fair" as const, payload: { tenant: "b", n } })));
    await jobs.tick({ budgetMs: 2_500, claimCutoffMs: 1_200, concurrency: 4 });
    // Before: every start went to tenant a (the claim resumed after b, which the shared limit held, so at a again).
    const firstB = ran.indexOf("b");
    expect(firstB).toBeGreaterThanOrEqual(0);
    expect(firstB).toBeLessThan(3);
    expect(ran.slice(0, 8).filter((t) => t === "b").length).toBeGreaterThanOrEqual(3);
  }, 15_000);
});
