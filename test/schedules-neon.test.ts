// The schedules' statements over the Neon serverless Pool (WebSocket proxy to the
// same server): sync, the one-statement idle tick, materialize, list, pause, resume,
// run-now, and ticks racing across both drivers.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, fromPg, memoryLogger, type Db } from "../src/index.js";
import { harness } from "./support/harness.js";
import { neonForFile } from "./support/neon.js";

const h = await harness("schedneon");
const proxied = neonForFile(h.url);
const neon = (): Db => proxied.db(3);

describe("schedules over the Neon Pool", () => {
  it("syncs, idles in one statement, enqueues each occurrence once across drivers, and serves the API", async () => {
    const clock = { t: Date.parse("2024-11-03T04:59:30Z") };
    const runs: string[] = [];
    const job = defineJob({ name: "ping", schema: z.object({ n: z.number() }), handler: (_p, ctx) => void runs.push(ctx.correlationId ?? "") });
    const make = (db: Db) =>
      createJobs({
        db, jobs: [job], logger: memoryLogger(), random: () => 0.5,
        settings: { tablePrefix: "neon_", leaseMarginMs: 1_000 },
        schedules: [{ name: "ny-hourly", cron: "0 * * * *", timezone: "America/New_York", job: "ping", payload: { n: 1 } }],
        scheduleOptions: { now: () => new Date(clock.t) },
      });
    const viaNeon = make(neon());
    await viaNeon.migrate();
    // The probe, the sync's read and write, and what is due under the synced rows.
    expect((await viaNeon.tick({ budgetMs: 5_000 })).statements).toBe(4);
    expect((await viaNeon.tick({ budgetMs: 5_000 })).statements).toBe(1);

    const racers = [viaNeon, make(neon()), make(fromPg(h.pool(2))), make(fromPg(h.pool(2)))];
    // 01:00 EDT, then 01:00 EST an hour later: both are real hours and fire once each.
    for (const t of ["2024-11-03T05:00:20Z", "2024-11-03T06:00:20Z"]) {
      clock.t = Date.parse(t);
      await Promise.all(racers.map((j) => j.tick({ budgetMs: 10_000 })));
    }
    expect(runs).toEqual(["schedule:ny-hourly:2024-11-03T05:00:00.000Z", "schedule:ny-hourly:2024-11-03T06:00:00.000Z"]);

    const [info] = (await viaNeon.schedules.list({ next: 2 })).items;
    expect(info).toMatchObject({ nextRuns: ["2024-11-03T07:00:00.000Z", "2024-11-03T08:00:00.000Z"], lastOccurrenceAt: "2024-11-03T06:00:00.000Z" });
    expect((await viaNeon.schedules.pause("ny-hourly")).nextRuns).toEqual([]);
    expect((await viaNeon.schedules.resume("ny-hourly")).nextRuns[0]).toBe("2024-11-03T07:00:00.000Z");
    const { id } = await viaNeon.schedules.run("ny-hourly");
    expect((await viaNeon.schedules.list()).items[0]!.lastJobId).toBe(id);
  });
});
