// Fan-out at its edges: a start the platform refuses, jobs more ticks could not take (held by a
// limit, or due within the asking tick's own free slots), a tick that only finds held jobs, and a
// tick endpoint that never answers.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { postTick } from "../src/platform/kick.js";
import type { Handoff } from "../src/store/tick/slot.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("fan_out_edges");

const slow = defineJob({ name: "slow", schema: z.object({ n: z.number() }), handler: () => sleep(150) });
const quick = defineJob({ name: "quick", schema: z.object({ n: z.number() }), handler: () => {} });

describe("fan-out at its edges", () => {
  it("a start the platform refuses frees its reserved slot at once, and the tick asks for no more", async () => {
    const jobs = await h.isolated([slow], { maxTicks: 4, concurrency: 2 });
    const prefix = jobs.settings.tablePrefix;
    await jobs.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ job: "slow" as const, payload: { n } })));
    const asked: Handoff[] = [];
    // As a deployment behind protection answers: 401, each time.
    const spawn = (hs: readonly Handoff[]) => (asked.push(...hs), Promise.reject(new Error("the tick endpoint answered 401")));
    const report = await jobs.tick({ budgetMs: 2_500, claimCutoffMs: 500, spawn });
    expect(report.claimed).toBeGreaterThan(0);
    // The first claim asked for three more ticks; after their refusal none more, and no continuation.
    expect(asked).toHaveLength(3);
    expect(report.spawned).toBe(3);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}ticks WHERE reserved OR expires_at > now()`)).toEqual([{ n: 0 }]);
    // So the next cron tick finds a slot, though the reservations would have run 30 s.
    expect(await jobs.tick({ budgetMs: 800 })).toMatchObject({ capped: false });
  }, 20_000);

  it("a started tick that answers only when it ends (a Worker's call to itself) took its slot: nothing is freed, and no warning", async () => {
    const jobs = await h.isolated([slow], { maxTicks: 2, concurrency: 2 });
    await jobs.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ job: "slow" as const, payload: { n } })));
    const started: Array<Promise<unknown>> = [];
    // The started tick runs; its answer comes when it has run (here: later than the asking tick waits).
    const spawn = (hs: readonly Handoff[]) => {
      const ran = Promise.all(hs.map((handoff) => jobs.tick({ budgetMs: 2_500, claimCutoffMs: 500, handoff })));
      started.push(ran);
      return ran.then(() => sleep(2_000));
    };
    const report = await jobs.tick({ budgetMs: 1_500, claimCutoffMs: 500, spawn });
    expect(report.spawned).toBeGreaterThan(0);
    expect(jobs.logs.filter((e) => e.msg === "a started tick did not answer: its reserved slot is freed")).toEqual([]);
    const children = (await Promise.all(started)).flat() as Array<{ slot: number | null; claimed: number }>;
    expect(children.every((c) => c.slot !== null)).toBe(true);
  });

  it("a start still unanswered when the tick ends has its slot freed, while the tick can (its failure came after the connection closed)", async () => {
    const jobs = await h.isolated([slow], { maxTicks: 4, concurrency: 2 });
    const prefix = jobs.settings.tablePrefix;
    await jobs.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ job: "slow" as const, payload: { n } })));
    const asked: Handoff[] = [];
    // A tick endpoint that takes the request and never answers.
    const spawn = (hs: readonly Handoff[]) => (asked.push(...hs), new Promise<never>(() => {}));
    const report = await jobs.tick({ budgetMs: 2_500, claimCutoffMs: 500, spawn });
    expect(report.spawned).toBeGreaterThan(0);
    expect(jobs.logs.find((e) => e.msg === "a started tick did not answer: its reserved slot is freed")).toMatchObject({ level: "warn", slots: expect.any(Array) });
    // Before: every slot stayed reserved for 30 s, and the next cron tick came back capped.
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}ticks WHERE reserved OR expires_at > now()`)).toEqual([{ n: 0 }]);
    expect(await jobs.tick({ budgetMs: 800 })).toMatchObject({ capped: false });
    // A started tick that comes after all takes a free slot as any tick does.
    expect(await jobs.tick({ budgetMs: 800, handoff: asked[0]! })).toMatchObject({ capped: false });
  }, 20_000);

  it("counts neither jobs held back by a limit nor those the tick's own free slots will take", async () => {
    const limited = defineJob({ name: "limited", schema: z.object({ n: z.number() }), concurrency: { limit: 1 }, handler: () => sleep(300) });
    const jobs = await h.isolated([limited, quick], { maxTicks: 4, concurrency: 4 });
    await jobs.enqueueMany(Array.from({ length: 200 }, (_, n) => ({ job: "limited" as const, payload: { n } })));
    await jobs.enqueueMany(Array.from({ length: 8 }, (_, n) => ({ job: "quick" as const, payload: { n } })));
    const asked: Handoff[] = [];
    // Stopped by its caller before its end, so it hands nothing on: what it asked for is fan-out alone.
    const stop = AbortSignal.timeout(800);
    await jobs.tick({ budgetMs: 5_000, signal: stop, spawn: (hs) => void asked.push(...hs) });
    // 8 unkeyed jobs and one limited at a time: a second tick at most, never three for 199 held jobs.
    expect(asked.length).toBeLessThanOrEqual(1);

    const few = await h.isolated([quick], { maxTicks: 4, concurrency: 10, batchSize: 2 });
    await few.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ job: "quick" as const, payload: { n } })));
    const more: Handoff[] = [];
    const report = await few.tick({ budgetMs: 5_000, claimCutoffMs: 300, spawn: (hs) => void more.push(...hs) });
    expect(report.succeeded).toBe(6);
    expect(more).toEqual([]);
  }, 20_000);

  it("a tick that finds only jobs held by a concurrency limit whose runs are in another tick ends, not polls to its cutoff", async () => {
    const limited = defineJob({ name: "limited", schema: z.object({ n: z.number() }), concurrency: { limit: 1 }, handler: ({ n }) => sleep(n === 0 ? 3_000 : 10) });
    const jobs = await h.isolated([limited], { maxTicks: 4, concurrency: 4, claimIntervalMs: 200 });
    await jobs.enqueue("limited", { n: 0 });
    const a = jobs.tick({ budgetMs: 8_000, claimCutoffMs: 1_000 });
    // The first tick runs the key's job (on a slow machine its claim may take a while).
    await expect.poll(async () => (await h.rows(`SELECT count(*)::int AS n FROM ${jobs.settings.tablePrefix}queue WHERE status = 'running'`))[0], { timeout: 5_000, interval: 20 }).toEqual({ n: 1 });
    await jobs.enqueueMany([1, 2, 3].map((n) => ({ job: "limited" as const, payload: { n } })));
    const b = await jobs.tick({ budgetMs: 5_000, claimCutoffMs: 500 });
    expect(b.claimed).toBe(0);
    // Its take-and-claim and its final statement; polling to its cutoff at the claim interval sent 16.
    expect(b.statements).toBeLessThanOrEqual(3);
    expect(await a).toMatchObject({ claimed: 4, succeeded: 4 });
  }, 20_000);

  it("a started tick that never answers ends the request at its timeout, so the kick is not held", async () => {
    const hung = createServer(() => {});
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/api/tick`;
      const started = Date.now();
      const error = await postTick({ CRON_SECRET: "s" }, { kick: true, async: true }, fetch, url).then(() => undefined, (e: unknown) => e);
      expect((error as Error).name).toBe("TimeoutError");
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      hung.closeAllConnections();
      hung.close();
    }
  }, 20_000);
});
