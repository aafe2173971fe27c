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

describe("a list's payload previews", () => {
  it("write out a payload of up to 8 KB as JSON, whatever PostgreSQL stores it in, and outline a larger one", async () => {
    const any = defineJob({ name: "any", schema: z.unknown(), handler: () => {} });
    const jobs = await h.isolated([any]);
    // 1,999 bytes of JSON that PostgreSQL's form holds in about 12 KB; about 12 KB of JSON in about 8 KB (uncompressed).
    const zeros = Array.from({ length: 1_000 }, () => 0);
    const falses = Array.from({ length: 2_000 }, () => false);
    const dense = (await jobs.enqueue("any", zeros, { delayMs: 60_000 })).id;
    const sparse = (await jobs.enqueue("any", falses, { delayMs: 60_000 })).id;
    const [sizes] = await h.rows<{ dense: number; sparse: number }>(
      `SELECT (SELECT pg_column_size(payload || '[]'::jsonb) FROM ${jobs.tables.queue} WHERE id = $1) AS dense, (SELECT pg_column_size(payload || '[]'::jsonb) FROM ${jobs.tables.queue} WHERE id = $2) AS sparse`,
      [dense, sparse],
    );
    expect(sizes!.dense).toBeGreaterThan(8_192);
    expect(sizes!.sparse).toBeLessThanOrEqual(8_192);
    const items = new Map((await jobs.list({ limit: 10 })).items.map((j) => [j.id, j]));
    const [stored] = await h.rows<{ t: string }>(`SELECT payload::text AS t FROM ${jobs.tables.queue} WHERE id = $1`, [dense]);
    // Before: outlined as "[1000 items]" (its stored size), and the 12 KB one written out.
    expect(items.get(dense)).toMatchObject({ payloadBytes: stored!.t.length, payloadTruncated: true });
    expect(items.get(dense)!.payloadPreview).toBe(stored!.t.slice(0, 300));
    expect(items.get(sparse)).toMatchObject({ payloadPreview: "[2000 items]", payloadBytes: null, payloadTruncated: true });
  });
});
