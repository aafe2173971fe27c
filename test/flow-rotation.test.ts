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
    const jobs = await h.isolated([work], { claimIntervalMs: 150 });
    await jobs.enqueueMany(Array.from({ length: 300 }, (_, i) => ({ job: "rot" as const, payload: { tenant: `k${String(i).padStart(3, "0")}` }, delayMs: 3_600_000 })));
    await jobs.enqueue("rot", { tenant: "zz-due-now" });
    // A claim looks at 32 keys; one cut short before the end of the keys is followed by the next at once
    // (before migration 023, at the claim interval: three claims a tick, a third of the keys).
    let ticks = 0;
    while (ran.length === 0 && ticks < 8) {
      ticks++;
      await jobs.tick({ budgetMs: 900, claimCutoffMs: 450, concurrency: 4 });
    }
    expect(ran).toEqual(["zz-due-now"]);
    expect(ticks).toBe(1);
    // Where the last tick's round-robin ended is stored for the next.
    expect(await h.rows(`SELECT flow_cursor IS NOT NULL AS stored FROM ${jobs.tables.state}`)).toEqual([{ stored: true }]);
    // Now nothing is due: a tick is one statement, however many keys hold delayed jobs.
    expect(await jobs.tick({ budgetMs: 900, claimCutoffMs: 450, concurrency: 4 })).toMatchObject({ claimed: 0, statements: 1 });
  });
});
