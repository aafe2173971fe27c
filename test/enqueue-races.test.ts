// Enqueues racing each other, and an enqueue inside an app's own transaction.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("enqueue_races");
const note = defineJob({ name: "note", schema: z.object({ n: z.number() }), handler: () => {} });

describe("two batches holding the same keys in other orders", () => {
  it("wait for each other instead of deadlocking (40P01), and each key has one job", async () => {
    const jobs = await h.isolated([note]);
    // A third session's uncommitted insert of the middle key makes both batches wait there, each
    // holding the keys it inserted before: in input order, they then wait for each other's.
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await jobs.enqueue("note", { n: 0 }, { idempotencyKey: "k2", db: holder });
      const items = ["k1", "k2", "k3"].map((key, n) => ({ job: "note" as const, payload: { n }, idempotencyKey: key }));
      const forward = jobs.enqueueMany(items);
      await sleep(200);
      const backward = jobs.enqueueMany([...items].reverse());
      await sleep(200);
      await holder.query("COMMIT");
      const [a, b] = await Promise.all([forward, backward]);
      expect(a.map((r) => r.id)).toEqual([...b].reverse().map((r) => r.id));
    } finally {
      holder.release();
    }
    const rows = await h.rows<{ key: string }>(`SELECT idempotency_key AS key FROM ${jobs.tables.queue} ORDER BY 1`);
    expect(rows.map((r) => r.key)).toEqual(["k1", "k2", "k3"]);
  });

  it("the same with debounce keys: one job per key, no deadlock", async () => {
    const jobs = await h.isolated([note]);
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await jobs.enqueue("note", { n: 0 }, { debounce: { key: "d2", delayMs: 60_000 }, db: holder });
      const items = ["d1", "d2", "d3"].map((key, n) => ({ job: "note" as const, payload: { n }, debounce: { key, delayMs: 60_000 } }));
      const forward = jobs.enqueueMany(items);
      await sleep(200);
      const backward = jobs.enqueueMany([...items].reverse());
      await sleep(200);
      await holder.query("COMMIT");
      await Promise.all([forward, backward]);
    } finally {
      holder.release();
    }
    const rows = await h.rows<{ key: string }>(`SELECT debounce_key AS key FROM ${jobs.tables.queue} ORDER BY 1`);
    expect(rows.map((r) => r.key)).toEqual(["d1", "d2", "d3"]);
  });
});

describe("an enqueue inside an app's transaction", () => {
  it("counts delayMs and a debounce's delay from the enqueue, not from when the transaction began", async () => {
    const jobs = await h.isolated([note]);
    const client = await h.main.connect();
    try {
      await client.query("BEGIN");
      await sleep(1_200);
      const delayed = await jobs.enqueue("note", { n: 1 }, { delayMs: 2_000, db: client });
      const debounced = await jobs.enqueue("note", { n: 2 }, { debounce: { key: "x", delayMs: 2_000 }, db: client });
      const [{ ahead }] = (await client.query<{ ahead: number }>(
        `SELECT min(extract(epoch FROM run_at - clock_timestamp()) * 1000)::float8 AS ahead FROM ${jobs.tables.queue} WHERE id = ANY ($1::uuid[])`,
        [[delayed.id, debounced.id]],
      )).rows as [{ ahead: number }];
      await client.query("COMMIT");
      // Counted from the transaction's start, both were due 0.8 s after it committed.
      expect(ahead).toBeGreaterThan(1_500);
    } finally {
      client.release();
    }
  });
});

describe("an option out of range", () => {
  it("is refused with a message that names the range it left", async () => {
    const jobs = await h.isolated([note]);
    await expect(jobs.enqueue("note", { n: 1 }, { priority: 2_147_483_648 })).rejects.toMatchObject({ code: "invalid_options", message: "priority must be an integer from -2147483647 to 2147483647" });
    await expect(jobs.enqueue("note", { n: 1 }, { delayMs: 1e14 })).rejects.toMatchObject({ code: "invalid_options", message: "delayMs must be a number of milliseconds from 0 to 1e13 (about 317 years)" });
    await expect(jobs.enqueue("note", { n: 1 }, { debounce: { key: "k", delayMs: 1e14 } })).rejects.toMatchObject({ code: "invalid_options", message: expect.stringMatching(/from 0 to 1e13/) });
  });
});
