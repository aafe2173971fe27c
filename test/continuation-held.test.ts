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

  it("a rate window that frees within the next tick's budget still hands on, and the successor runs the job", async () => {
    const limited = defineJob({
      name: "limited",
      schema: z.object({ t: z.string() }),
      rateLimit: { limit: 1, periodMs: 1_500, key: (p) => p.t },
      handler: () => {},
    });
    const jobs = await h.isolated([limited], { maxTicks: 2, concurrency: 5 });
    for (let i = 0; i < 2; i++) await jobs.enqueue("limited", { t: "acme" });

    const handoffs: Handoff[] = [];
    const spawn = (hs: readonly Handoff[]) => void handoffs.push(...hs);
    // The window frees after this tick's claim cutoff (half its budget) but within a budget from its end:
    // the tick ends at once, and hands on.
    const first = await jobs.tick({ budgetMs: 2_000, spawn });
    expect(first).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(handoffs).toHaveLength(1);
    const second = await jobs.tick({ budgetMs: 4_000, spawn, handoff: handoffs[0]! });
    expect(second).toMatchObject({ claimed: 1, succeeded: 1 });
    await sleep(0);
    expect(handoffs).toHaveLength(1);
  });
});
