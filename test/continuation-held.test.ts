// Continuation hands a tick's slot on only when a new tick could start something: jobs held back
// by a limit that frees long after the tick's budget do not chain invocations back to back.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import type { Handoff } from "../src/store/tick/slot.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("continuation_held");

describe("continuation with jobs held back by limits", () => {
  it("a rate window that frees in ten minutes does not chain ticks: the tick and its successor both end without a handoff", async () => {
    const limited = defineJob({
      name: "limited",
      schema: z.object({ t: z.string() }),
      rateLimit: { limit: 1, periodMs: 600_000, key: (p) => p.t },
      handler: () => {},
    });
    const jobs = await h.isolated([limited], { maxTicks: 4, concurrency: 5 });
    const prefix = jobs.settings.tablePrefix;
    for (let i = 0; i < 5; i++) await jobs.enqueue("limited", { t: "acme" });

    const handoffs: Handoff[] = [];
    const spawn = (hs: readonly Handoff[]) => void handoffs.push(...hs);
    const first = await jobs.tick({ budgetMs: 5_000, spawn });
    expect(first).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(handoffs).toEqual([]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}ticks WHERE reserved`)).toEqual([{ n: 0 }]);

    // A successor started anyway (say, by a fan-out) takes the slot, finds only held jobs, and does not hand on either.
    const [slot] = await h.rows<{ slot: number; token: string }>(
      `UPDATE ${prefix}ticks SET owner = gen_random_uuid(), reserved = true, expires_at = now() + interval '30 seconds'
       WHERE slot = 2 RETURNING slot, owner::text AS token`,
    );
    const started = Date.now();
    const successor = await jobs.tick({ budgetMs: 5_000, spawn, handoff: slot! });
    expect(successor.claimed).toBe(0);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(handoffs).toEqual([]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}ticks WHERE reserved OR expires_at > now()`)).toEqual([{ n: 0 }]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}queue WHERE status = 'queued'`)).toEqual([{ n: 4 }]);
  });

  it("a rate window that frees within what a successor claims for still hands on, and the successor runs the job", async () => {
    const limited = defineJob({
      name: "limited",
      schema: z.object({ t: z.string() }),
      rateLimit: { limit: 1, periodMs: 3_000, key: (p) => p.t },
      handler: () => {},
    });
    // Keeps the first tick going past its claim cutoff (2 s of a 4 s budget).
    const slow = defineJob({ name: "slow", schema: z.object({}), handler: () => sleep(1_800) });
    const jobs = await h.isolated([limited, slow], { maxTicks: 2, concurrency: 5 });
    for (let i = 0; i < 2; i++) await jobs.enqueue("limited", { t: "acme" });
    await jobs.enqueue("slow", {});

    const handoffs: Handoff[] = [];
    const spawn = (hs: readonly Handoff[]) => void handoffs.push(...hs);
    // It ends when the slow job does, about 1.8 s in; the window frees at 3 s, within the 2 s a successor claims for.
    const first = await jobs.tick({ budgetMs: 4_000, spawn });
    expect(first).toMatchObject({ claimed: 2, succeeded: 2 });
    expect(handoffs).toHaveLength(1);
    const second = await jobs.tick({ budgetMs: 4_000, spawn, handoff: handoffs[0]! });
    expect(second).toMatchObject({ claimed: 1, succeeded: 1 });
    await sleep(0);
    expect(handoffs).toHaveLength(1);
  });

  it("a rate window that frees after a successor's claim cutoff, though within its budget, does not chain ticks either", async () => {
    const limited = defineJob({
      name: "limited",
      schema: z.object({ t: z.string() }),
      rateLimit: { limit: 1, periodMs: 4_500, key: (p) => p.t },
      handler: () => {},
    });
    const jobs = await h.isolated([limited], { maxTicks: 2, concurrency: 5 });
    for (let i = 0; i < 2; i++) await jobs.enqueue("limited", { t: "acme" });
    const queue: Handoff[] = [];
    const spawn = (hs: readonly Handoff[]) => void queue.push(...hs);
    // A 6 s budget claims for 3 s (the cutoff is half the budget at most); the window frees 4.5 s after the first claim.
    await jobs.tick({ budgetMs: 6_000, spawn });
    let invocations = 1;
    // Each handoff is started at once, as a platform would.
    const started = Date.now();
    while (queue.length > 0 && Date.now() - started < 20_000) {
      await jobs.tick({ budgetMs: 6_000, spawn, handoff: queue.shift()! });
      invocations++;
    }
    expect(invocations).toBeLessThan(3);
  }, 30_000);

  it("jobs held by a concurrency limit do not chain ticks: the tick running the key's job claims the next when it ends", async () => {
    const long = defineJob({
      name: "long",
      schema: z.object({ n: z.number() }),
      concurrency: { limit: 1 },
      handler: ({ n }) => sleep(n === 0 ? 2_500 : 10),
    });
    const jobs = await h.isolated([long], { concurrency: 4, maxTicks: 4, claimIntervalMs: 200 });
    await jobs.enqueue("long", { n: 0 });
    // Its claim cutoff (half the budget, 5 s) is well after the first job ends at 2.5 s (at 6 s, a loaded machine came within 0.1 s of it).
    const a = jobs.tick({ budgetMs: 10_000 });
    await sleep(300);
    await jobs.enqueue("long", { n: 1 });
    const handoffs: Handoff[] = [];
    const b = await jobs.tick({ budgetMs: 1_000, claimCutoffMs: 200, spawn: (hs) => void handoffs.push(...hs) });
    expect(b.claimed).toBe(0);
    expect(handoffs).toEqual([]);
    // The first tick ran both.
    expect(await a).toMatchObject({ claimed: 2, succeeded: 2 });
  }, 20_000);
});

describe("continuation of work enqueued after the tick's last claim", () => {
  it("a job enqueued while every slot is held by a tick past its claim cutoff runs when that tick hands its slot on, not at the next cron", async () => {
    // Keeps the tick past its claim cutoff (2 s into a 4 s budget).
    const slow = defineJob({ name: "slow", schema: z.object({}), handler: () => sleep(3_000) });
    const quick = defineJob({ name: "quick", schema: z.object({}), handler: () => {} });
    const jobs = await h.isolated([slow, quick], { maxTicks: 1, concurrency: 5 });
    await jobs.enqueue("slow", {});
    const handoffs: Handoff[] = [];
    const spawn = (hs: readonly Handoff[]) => void handoffs.push(...hs);
    const running = jobs.tick({ budgetMs: 4_000, claimCutoffMs: 2_000, spawn });
    await sleep(2_300);
    await jobs.enqueue("quick", {});
    // Its kick finds the only slot taken.
    expect(await jobs.tick({ budgetMs: 4_000, spawn })).toMatchObject({ capped: true, claimed: 0 });
    expect(await running).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(handoffs).toHaveLength(1);
    expect(await jobs.tick({ budgetMs: 4_000, spawn, handoff: handoffs[0]! })).toMatchObject({ claimed: 1, succeeded: 1 });
    // With nothing due, the successor ends without a handoff of its own.
    expect(handoffs).toHaveLength(1);
  });

  it("so does one enqueued while the tick's last claim held jobs back for a rate window far off: the held ones alone do not chain ticks", async () => {
    // Outlives the first tick's budget (it is requeued at the deadline, so no run of the tick ends after its last claim), then is quick.
    let runs = 0;
    const slow = defineJob({ name: "slow", schema: z.object({}), handler: () => (++runs === 1 ? sleep(6_000) : undefined) });
    const quick = defineJob({ name: "quick", schema: z.object({}), handler: () => {} });
    const limited = defineJob({ name: "limited", schema: z.object({ t: z.string() }), rateLimit: { limit: 1, periodMs: 600_000, key: (p) => p.t }, handler: () => {} });
    const jobs = await h.isolated([slow, quick, limited], { maxTicks: 1, concurrency: 5 });
    await jobs.enqueue("slow", {});
    for (let i = 0; i < 2; i++) await jobs.enqueue("limited", { t: "acme" });
    const handoffs: Handoff[] = [];
    const spawn = (hs: readonly Handoff[]) => void handoffs.push(...hs);
    const running = jobs.tick({ budgetMs: 4_000, claimCutoffMs: 2_000, spawn });
    await sleep(2_300);
    await jobs.enqueue("quick", {});
    expect(await jobs.tick({ budgetMs: 4_000, spawn })).toMatchObject({ capped: true, claimed: 0 });
    expect(await running).toMatchObject({ succeeded: 1, requeued: 1 });
    expect(handoffs).toHaveLength(1);
    // The successor runs the new job and the requeued one; the held one waits for its window, and it hands nothing on for it.
    expect(await jobs.tick({ budgetMs: 4_000, spawn, handoff: handoffs[0]! })).toMatchObject({ claimed: 2, succeeded: 2 });
    expect(handoffs).toHaveLength(1);
  });
});
