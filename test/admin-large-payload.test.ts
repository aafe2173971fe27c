// Reading one job or dead letter with a payload near the limit costs about what reading the payload
// does: built into the view's jsonb, a 1 MB payload was copied at each step (0.6 s of server time
// against 45 ms for its text), and the dashboard's live page reads it every 3 s.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, PermanentJobError } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("admin_large_payload");
const big = defineJob({ name: "big", schema: z.object({ rows: z.array(z.object({ a: z.number(), b: z.string() })) }), handler: () => { throw new PermanentJobError("no"); } });

/** Median of 3 timings. */
const median = async (f: () => Promise<unknown>) => {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await f();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[1]!;
};

describe("a job with a payload near the limit", () => {
  it("reads (queued, then dead) in a few times what reading its payload alone takes, with the payload whole", async () => {
    const jobs = await h.isolated([big]);
    const payload = { rows: Array.from({ length: 50_000 }, (_, i) => ({ a: i, b: "x" })) };
    expect(JSON.stringify(payload).length).toBeGreaterThan(800_000);
    const { id } = await jobs.enqueue("big", payload, { delayMs: 60_000 });
    const read = (table: string) => () => h.rows(`SELECT payload FROM ${table} WHERE id = $1`, [id]);
    const queued = await median(() => jobs.get(id));
    const baseline = await median(read(jobs.tables.queue));
    expect((await jobs.get(id))?.payload).toEqual(payload);
    expect(queued / baseline).toBeLessThan(4);
    await jobs.run(id);
    await jobs.tick({ budgetMs: 10_000 });
    expect((await jobs.deadLetters.get(id))?.payload).toEqual(payload);
    const dead = await median(() => jobs.deadLetters.get(id));
    const deadBaseline = await median(read(jobs.tables.deadLetters));
    expect(dead / deadBaseline).toBeLessThan(4);
    expect((await jobs.get(id))?.payload).toEqual(payload);
  });
});
