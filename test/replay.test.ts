import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, isJobsError, PermanentJobError } from "../src/index.js";
import { bulkReplay } from "../src/store/admin/replay-bulk.js";
import { replayEdit } from "../src/admin/replay-edit.js";
import { replayDeadLetter } from "../src/store/admin/replay.js";
import { discardDeadLetters } from "../src/store/admin/dead-letter-discard.js";
import { getDeadLetter } from "../src/store/admin/dead-letter-get.js";
import { listDeadLetters } from "../src/store/admin/dead-letters-list.js";
import { getJob } from "../src/store/admin/job-get.js";
import { harness } from "./support/harness.js";

const h = await harness("replay");

const failing = defineJob({
  name: "fails",
  schema: z.object({ n: z.number().int() }),
  handler: () => {
    throw new PermanentJobError("no");
  },
});
const other = defineJob({ name: "other-fails", schema: z.object({}), handler: () => { throw new PermanentJobError("no"); } });
const jobs = h.make([failing, other], { concurrency: 50, batchSize: 50 });

/** Enqueues and ticks until these jobs are dead letters; returns their ids. */
const deadLetters = async (items: Array<{ n: number; key?: string }>, job: "fails" = "fails") => {
  const results = await jobs.enqueueMany(items.map((i) => ({ job, payload: { n: i.n }, idempotencyKey: i.key })));
  await jobs.tick({ budgetMs: 5_000 });
  return results.map((r) => r.id);
};

const queueCount = async (id: string) => Number((await h.rows<{ n: string }>(`SELECT count(*) AS n FROM jobs_queue WHERE id = $1`, [id]))[0]!.n);

describe("replayDeadLetter", () => {
  it("moves the dead letter back to the queue with its id, due now, attempt 0", async () => {
    const [id] = await deadLetters([{ n: 1 }]);
    expect((await getDeadLetter(h.db, jobs.tables, id!))?.reason).toBe("permanent");
    expect(await replayDeadLetter(h.db, jobs.tables, id!)).toEqual({ id });
    expect(await getDeadLetter(h.db, jobs.tables, id!)).toBeNull();
    const job = await getJob(h.db, jobs.tables, id!);
    expect(job).toMatchObject({ id, job: "fails", status: "queued", attempt: 0, payload: { n: 1 } });
    // Replaying again finds nothing.
    expect(await replayDeadLetter(h.db, jobs.tables, id!)).toBeNull();
  });

  it("queues a dead letter once when 20 replays run at once on separate connections", async () => {
    const [id] = await deadLetters([{ n: 2 }]);
    const pool = h.pool(20);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => replayDeadLetter({ query: (t, p) => pool.query(t, p as unknown[]).then((r) => ({ rows: r.rows, rowCount: r.rowCount ?? 0 })) }, jobs.tables, id!)),
    );
    expect(results.filter((r) => r !== null)).toEqual([{ id }]);
    expect(await queueCount(id!)).toBe(1);
    expect(await getDeadLetter(h.db, jobs.tables, id!)).toBeNull();
  });

  it("validates an edited payload against the job's schema and changes nothing when it is bad", async () => {
    const [id] = await deadLetters([{ n: 3 }]);
    const edit = (payload: unknown) => replayEdit(h.db, jobs.tables, id!, payload, jobs.registry, 100);
    const bad = await edit({ n: "x" }).catch((e: unknown) => e);
    expect(isJobsError(bad) && bad.code).toBe("invalid_payload");
    const big = await edit({ n: 1, pad: "x".repeat(200) }).catch((e: unknown) => e);
    expect(isJobsError(big) && big.code).toBe("payload_too_large");
    expect((await getDeadLetter(h.db, jobs.tables, id!))?.payload).toEqual({ n: 3 });
    expect(await replayDeadLetter(h.db, jobs.tables, id!, (await edit({ n: 30 }))!)).toEqual({ id });
    expect((await getJob(h.db, jobs.tables, id!))?.payload).toEqual({ n: 30 });
    // No such dead letter (any more): nothing to check the payload against.
    expect(await edit({ n: 31 })).toBeNull();
    expect(await replayEdit(h.db, jobs.tables, "not-a-uuid", { n: 1 }, jobs.registry, 100)).toBeNull();
  });

  it("an edit checked for one job is not stored on a dead letter of another", async () => {
    const [id] = await deadLetters([{ n: 5 }]);
    const checked = (await replayEdit(h.db, jobs.tables, id!, { n: 50 }, jobs.registry, 100))!;
    expect(await replayDeadLetter(h.db, jobs.tables, id!, { ...checked, jobName: "other-fails" })).toBeNull();
    expect((await getDeadLetter(h.db, jobs.tables, id!))?.payload).toEqual({ n: 5 });
  });

  it("refuses with conflict, and keeps the dead letter, when a live job holds its idempotency key", async () => {
    const [id] = await deadLetters([{ n: 4, key: "k-4" }]);
    const live = await jobs.enqueue("fails", { n: 40 }, { idempotencyKey: "k-4", delayMs: 60_000 });
    const e = await replayDeadLetter(h.db, jobs.tables, id!).catch((x: unknown) => x);
    expect(isJobsError(e) && e.code).toBe("conflict");
    expect(await getDeadLetter(h.db, jobs.tables, id!)).not.toBeNull();
    expect(await queueCount(live.id)).toBe(1);
  });

  it("discards a dead letter for good", async () => {
    const [id] = await deadLetters([{ n: 5 }]);
    expect(await jobs.deadLetters.discard(id!)).toEqual({ id, discarded: true });
    await expect(jobs.deadLetters.discard(id!)).rejects.toMatchObject({ code: "not_found" });
    // Gone from the dead letters; the run history still says how it ended.
    expect(await h.rows(`SELECT 1 FROM ${jobs.tables.deadLetters} WHERE id = $1`, [id])).toEqual([]);
    expect(await getJob(h.db, jobs.tables, id!)).toMatchObject({ status: "dead", reason: null, payload: { n: 5 } });
    await expect(jobs.deadLetters.discard("not-a-uuid")).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("bulkReplay", () => {
  it("replays by ids and reports unknown ids as not_found", async () => {
    const ids = await deadLetters([{ n: 10 }, { n: 11 }]);
    const missing = crypto.randomUUID();
    const r = await bulkReplay(h.db, jobs.tables, { ids: [...ids, missing, "garbage"] });
    expect(new Set(r.replayed)).toEqual(new Set(ids));
    expect(r.skipped).toEqual([{ id: missing, reason: "not_found" }, { id: "garbage", reason: "not_found" }]);
    for (const id of ids) expect(await queueCount(id)).toBe(1);
  });

  it("refuses a selector it does not know, replaying nothing, instead of reading it as no filter", async () => {
    const ids = await deadLetters([{ n: 12 }, { n: 13 }]);
    const before = await h.rows(`SELECT id FROM jobs_dead_letters`);
    const cases: Array<[object, string]> = [[{ jobb: "fails" }, "jobb"], [{ job: "fails", reasons: "permanent" }, "reasons"], [{ id: ids[0] }, "id"], [{ ids, job: "fails" }, "job"]];
    for (const [selector, field] of cases) {
      const e = await jobs.deadLetters.replayMany(selector as never).catch((x: unknown) => x);
      expect(e).toMatchObject({ code: "invalid_options", details: { field } });
    }
    expect(await h.rows(`SELECT id FROM jobs_dead_letters`)).toEqual(before);
    for (const id of ids) expect(await queueCount(id)).toBe(0);
  });

  it("replays all of one job, oldest first, in pages, leaving other jobs' dead letters", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    await h.rows(`DELETE FROM jobs_dead_letters`);
    const ids = await deadLetters([{ n: 20 }, { n: 21 }, { n: 22 }]);
    const [otherId] = (await jobs.enqueueMany([{ job: "other-fails", payload: {} }])).map((r) => r.id);
    await jobs.tick({ budgetMs: 5_000 });
    const first = await bulkReplay(h.db, jobs.tables, { job: "fails", limit: 2 });
    expect(first.replayed).toHaveLength(2);
    expect(first.remaining).toBe(1);
    const second = await bulkReplay(h.db, jobs.tables, { job: "fails" });
    expect(second.remaining).toBe(0);
    expect(new Set([...first.replayed, ...second.replayed])).toEqual(new Set(ids));
    const page = await listDeadLetters(h.db, jobs.tables, {});
    expect(page.items.map((d) => d.id)).toEqual([otherId]);
  });

  it("replays only the newest of dead letters sharing a key, and none whose key a live job holds", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    await h.rows(`DELETE FROM jobs_dead_letters`);
    const [a] = await deadLetters([{ n: 30, key: "same" }]);
    const [b] = await deadLetters([{ n: 31, key: "same" }]);
    const [c] = await deadLetters([{ n: 32, key: "held" }]);
    await jobs.enqueue("fails", { n: 33 }, { idempotencyKey: "held", delayMs: 60_000 });
    const r = await bulkReplay(h.db, jobs.tables, { ids: [a!, b!, c!] });
    expect(r.replayed).toEqual([b]);
    expect(new Set(r.skipped.map((s) => `${s.id}:${s.reason}`))).toEqual(new Set([`${a}:conflict`, `${c}:conflict`]));
  });

  it("by filter does not count as remaining the letters held by the one of their key it replayed (a next call replays none of them)", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    await h.rows(`DELETE FROM jobs_dead_letters`);
    for (const n of [70, 71, 72]) await deadLetters([{ n, key: "shared" }]);
    const first = await bulkReplay(h.db, jobs.tables, { job: "fails" });
    expect(first).toMatchObject({ replayed: [expect.any(String)], remaining: 0 });
    expect(first.skipped.map((s) => s.reason)).toEqual(["conflict", "conflict"]);
    expect(await bulkReplay(h.db, jobs.tables, { job: "fails" })).toMatchObject({ replayed: [], remaining: 0 });
  });

  it("by filter passes over letters a live job blocks, so that calls get through the others and end", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    await h.rows(`DELETE FROM jobs_dead_letters`);
    const blocked = await deadLetters([{ n: 60, key: "k60" }, { n: 61, key: "k61" }]);
    for (const n of [60, 61]) await jobs.enqueue("fails", { n }, { idempotencyKey: `k${n}`, delayMs: 60_000 });
    // Newer: they died after the blocked ones, so the oldest-first limit met only blocked letters before.
    await h.rows(`UPDATE jobs_dead_letters SET dead_at = dead_at - interval '1 hour' WHERE id = ANY ($1::uuid[])`, [blocked]);
    const free = await deadLetters([{ n: 62 }]);
    const r = await bulkReplay(h.db, jobs.tables, { job: "fails", limit: 2 });
    expect(r).toMatchObject({ replayed: free, remaining: 0 });
    expect(await bulkReplay(h.db, jobs.tables, { job: "fails" })).toMatchObject({ replayed: [], remaining: 0 });
  });

  it("replays all matching a reason filter in one statement, and counts what still matches", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    await h.rows(`DELETE FROM jobs_dead_letters`);
    const ids = await deadLetters([{ n: 40 }, { n: 41 }, { n: 42 }]);
    // One of them died for another reason.
    await h.rows(`UPDATE jobs_dead_letters SET reason = 'exhausted' WHERE id = $1`, [ids[2]]);
    // The three died in one statement, so "oldest first" has no order among them: check the sets.
    const first = await bulkReplay(h.db, jobs.tables, { reason: "permanent", limit: 1 });
    expect(first.remaining).toBe(1);
    expect(first.replayed).toHaveLength(1);
    const second = await bulkReplay(h.db, jobs.tables, { job: "fails", reason: "permanent" });
    expect(second.remaining).toBe(0);
    expect(new Set([...first.replayed, ...second.replayed])).toEqual(new Set([ids[0], ids[1]]));
    expect((await listDeadLetters(h.db, jobs.tables, {})).items.map((d) => d.id)).toEqual([ids[2]]);
  });

  it("discards many dead letters in one statement, reporting which existed", async () => {
    const ids = await deadLetters([{ n: 50 }, { n: 51 }]);
    const missing = crypto.randomUUID();
    expect(new Set(await discardDeadLetters(h.db, jobs.tables, [...ids, missing, "garbage"]))).toEqual(new Set(ids));
    for (const id of ids) expect(await getDeadLetter(h.db, jobs.tables, id)).toBeNull();
  });

  it("rejects an empty selector", async () => {
    const e = await bulkReplay(h.db, jobs.tables, { ids: [] }).catch((x: unknown) => x);
    expect(isJobsError(e) && e.code).toBe("invalid_options");
  });
});

describe("a bulk replay by filter over many dead letters", () => {
  it("reads its letters oldest first along an index and probes the queue per letter: no scan of the queue or the dead letters", async () => {
    const jobs = await h.isolated([]);
    const t = jobs.tables;
    await h.db.query(`INSERT INTO ${t.queue} (id, job_name, payload, run_at, idempotency_key)
                      SELECT gen_random_uuid(), 'other', '{}', now() + interval '1 hour', 'k' || g FROM generate_series(1, 100000) g`);
    await h.db.query(`INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at, idempotency_key)
                      SELECT gen_random_uuid(), 'mail', '{}', 1, 1, 0, CASE WHEN g % 10 = 0 THEN 'permanent' ELSE 'exhausted' END,
                             now() - g * interval '1 second', now() - interval '1 day', CASE WHEN g % 3 = 0 THEN 'k' || g END
                      FROM generate_series(1, 60000) g`);
    await h.db.query(`ANALYZE ${t.queue}`);
    await h.db.query(`ANALYZE ${t.deadLetters}`);
    const sent: Array<{ text: string; params: unknown[] | undefined }> = [];
    const spy = { query: (text: string, params?: unknown[]) => (sent.push({ text, params }), Promise.resolve({ rows: [], rowCount: 0 })) };
    await bulkReplay(spy as never, t, { reason: "exhausted", limit: 100 });
    const client = await h.main.connect();
    type Node = { "Node Type": string; "Relation Name"?: string; "Actual Rows": number; "Actual Loops": number; Plans?: Node[] };
    const nodes = (n: Node): Node[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
    try {
      await client.query("BEGIN");
      const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: Node }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sent[0]!.text}`, sent[0]!.params);
      await client.query("ROLLBACK");
      const all = nodes(rows[0]!["QUERY PLAN"][0]!.Plan);
      expect(all.filter((n) => n["Node Type"] === "Seq Scan").map((n) => n["Relation Name"])).toEqual([]);
      // Each probe of the queue finds no row (no live twin): it never reads the queue for a hash.
      for (const n of all.filter((n) => n["Relation Name"] === t.queue && n["Node Type"] !== "ModifyTable")) expect(n["Actual Rows"]).toBeLessThanOrEqual(1);
    } finally {
      client.release();
    }
    const result = await bulkReplay(h.db, t, { reason: "exhausted", limit: 100 });
    expect(result.replayed).toHaveLength(100);
    // Counted up to 10,000, never further.
    expect(result.remaining).toBe(10_000);
  }, 60_000);
});

describe("a replay of the letter as it was seen", () => {
  it("with replays, queues it once: a second click or a retried request finds it replayed, even where the job failed again at once", async () => {
    const jobs = await h.isolated([failing]);
    const { id } = await jobs.enqueue("fails", { n: 1 });
    await jobs.tick({ budgetMs: 5_000 });
    const seen = (await jobs.deadLetters.get(id))!;
    expect(seen.replays).toBe(0);
    expect(await jobs.deadLetters.replay(id, { replays: seen.replays })).toEqual({ id, replayed: true });
    // The replayed job fails at once: the letter is back, replayed once.
    await jobs.tick({ budgetMs: 5_000 });
    expect((await jobs.deadLetters.get(id))?.replays).toBe(1);
    const again = await jobs.deadLetters.replay(id, { replays: seen.replays }).catch((e: unknown) => e);
    expect(again).toMatchObject({ code: "not_found" });
    expect((await jobs.deadLetters.get(id))?.replays).toBe(1);
    // Edited, the same; and as seen now, it goes.
    expect(await jobs.deadLetters.replay(id, { payload: { n: 2 }, replays: 0 }).catch((e: unknown) => e)).toMatchObject({ code: "not_found" });
    expect(await jobs.deadLetters.replay(id, { payload: { n: 2 }, replays: 1 })).toEqual({ id, replayed: true });
    for (const replays of [-1, 1.5, "0", Number.NaN]) {
      expect(await jobs.deadLetters.replay(id, { replays } as never).catch((e: unknown) => e)).toMatchObject({ code: "invalid_options", details: { field: "replays" } });
    }
    expect(await jobs.deadLetters.replay(id, { replay: 0 } as never).catch((e: unknown) => e)).toMatchObject({ code: "invalid_options", details: { field: "replay" } });
  });
});

describe("a bulk replay by filter behind many letters a live job holds", () => {
  it("reads at most 10,000 letters a call and returns a cursor to go on from, so each call is bounded and the calls end", async () => {
    const jobs = await h.isolated([]);
    const t = jobs.tables;
    const held = 40_000;
    // Each older letter's idempotency key is held by a queued job; the five newest are free.
    await h.db.query(`INSERT INTO ${t.queue} (id, job_name, payload, run_at, idempotency_key)
                      SELECT gen_random_uuid(), 'mail', '{}', now() + interval '1 hour', 'k' || g FROM generate_series(1, ${held}) g`);
    await h.db.query(`INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at, idempotency_key)
                      SELECT gen_random_uuid(), 'mail', '{}', 1, 1, 0, 'exhausted', now() - interval '1 day' + g * interval '1 millisecond', now() - interval '2 days',
                             CASE WHEN g <= ${held} THEN 'k' || g END
                      FROM generate_series(1, ${held + 5}) g`);
    // Letters of other jobs and reasons, so that a filter on both picks a few of the table's letters.
    await h.db.query(`INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at)
                      SELECT gen_random_uuid(), CASE WHEN g % 2 = 0 THEN 'mail' ELSE 'sms' END, '{}', 1, 1, 0, 'permanent',
                             now() - interval '1 day' + g * interval '1 millisecond', now() - interval '2 days'
                      FROM generate_series(1, 60000) g`);
    await h.db.query(`ANALYZE ${t.queue}`);
    await h.db.query(`ANALYZE ${t.deadLetters}`);
    type Node = { "Node Type": string; "Relation Name"?: string; "Actual Rows": number; "Actual Loops": number; Plans?: Node[] };
    const nodes = (n: Node): Node[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
    const client = await h.main.connect();
    try {
      for (const selector of [{ job: "mail" }, { job: "mail", reason: "exhausted" }, { reason: "exhausted" }]) {
        const sent: Array<{ text: string; params: unknown[] | undefined }> = [];
        const spy = { query: (text: string, params?: unknown[]) => (sent.push({ text, params }), Promise.resolve({ rows: [], rowCount: 0 })) };
        await bulkReplay(spy as never, t, selector);
        await client.query("BEGIN");
        const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: Node }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sent[0]!.text}`, sent[0]!.params);
        await client.query("ROLLBACK");
        const letters = nodes(rows[0]!["QUERY PLAN"][0]!.Plan).filter((n) => n["Relation Name"] === t.deadLetters);
        expect([selector, letters.filter((n) => n["Node Type"] === "Seq Scan")]).toEqual([selector, []]);
        const read = letters.reduce((sum, n) => sum + n["Actual Rows"] * n["Actual Loops"], 0);
        // The walk and the count past where it stopped, each at most 10,000 (it read all 40,005, twice, or
        // every matching letter to sort them), and the replayed letters locked, deleted and returned by id.
        expect([selector, read <= 2 * 10_000 + 3 * 1_000]).toEqual([selector, true]);
      }
    } finally {
      client.release();
    }
    const first = await bulkReplay(h.db, t, { job: "mail", reason: "exhausted" });
    expect(first).toMatchObject({ replayed: [], skipped: [], nextCursor: expect.any(String) });
    const replayed: string[] = [];
    let calls = 1;
    for (let cursor = first.nextCursor; cursor !== null; calls++) {
      const r = await bulkReplay(h.db, t, { job: "mail", reason: "exhausted", cursor });
      replayed.push(...r.replayed);
      cursor = r.nextCursor;
    }
    expect({ calls, replayed: replayed.length }).toEqual({ calls: 5, replayed: 5 });
    const { rows: left } = await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t.deadLetters} WHERE reason = 'exhausted'`);
    expect(left[0]!.n).toBe(held);
  }, 120_000);

  it("ends a walk whose replayed letters die again meanwhile, replaying each once (they came back past the cursor, again and again)", async () => {
    const jobs = await h.isolated([failing]);
    const t = jobs.tables;
    const ids = (await jobs.enqueueMany(Array.from({ length: 30 }, (_, n) => ({ job: "fails" as const, payload: { n } })))).map((r) => r.id);
    await jobs.tick({ budgetMs: 5_000, concurrency: 50 });
    const replays = new Map<string, number>();
    let cursor: string | null | undefined;
    let calls = 0;
    do {
      const r = await bulkReplay(h.db, t, { job: "fails", limit: 10, ...(cursor ? { cursor } : {}) });
      for (const id of r.replayed) replays.set(id, (replays.get(id) ?? 0) + 1);
      cursor = r.nextCursor;
      calls++;
      // The replayed jobs fail at once, and are dead letters again before the next call.
      await jobs.tick({ budgetMs: 5_000, concurrency: 50 });
    } while (cursor && calls < 20);
    expect({ calls, replayed: replays.size, most: Math.max(...replays.values()) }).toEqual({ calls: 4, replayed: 30, most: 1 });
    expect([...replays.keys()].sort()).toEqual([...ids].sort());
    // A cursor the last release gave (its last letter's time and id, no start) still goes on from there.
    const { rows } = await h.db.query<{ at: string; id: string }>(
      `SELECT to_char(dead_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at, id::text FROM ${t.deadLetters} ORDER BY dead_at, id LIMIT 1`,
    );
    const old = btoa(JSON.stringify([rows[0]!.at, rows[0]!.id])).replace(/=+$/, "");
    expect((await bulkReplay(h.db, t, { job: "fails", limit: 100, cursor: old })).replayed).toHaveLength(29);
  });

  it("refuses a cursor it did not give", async () => {
    const jobs = await h.isolated([]);
    await expect(bulkReplay(h.db, jobs.tables, { job: "mail", cursor: "nope" })).rejects.toMatchObject({ code: "invalid_options", details: { field: "cursor" } });
  });
});

describe("a cancelled job", () => {
  it("reads as cancelled, also after it was replayed from its dead letter (it read as dead), and can be run again from its run", async () => {
    const doomed = defineJob({ name: "doomed-once", schema: z.object({ n: z.number() }), handler: () => { throw new PermanentJobError("no"); } });
    const jobs = await h.isolated([doomed]);
    const { id } = await jobs.enqueue("doomed-once", { n: 1 });
    await jobs.tick({ budgetMs: 5_000 });
    expect(await jobs.get(id)).toMatchObject({ status: "dead" });
    await jobs.deadLetters.replay(id);
    await h.db.query(`UPDATE ${jobs.tables.queue} SET run_at = now() + interval '1 hour' WHERE id = $1`, [id]);
    expect(await jobs.cancel(id)).toEqual({ id, cancelled: true });
    const cancelled = await jobs.get(id);
    expect(cancelled).toMatchObject({ status: "cancelled", reason: null, deadAt: null, replays: 1, payload: { n: 1 } });
    expect(cancelled!.attempts!.map((a) => a.outcome)).toEqual(["dead_lettered", "cancelled"]);
    const run = (await jobs.runs.list({ jobId: id, outcome: "cancelled" })).items[0]!;
    const again = await jobs.runs.rerun(run.id);
    expect(await jobs.get(again.id)).toMatchObject({ status: "queued", payload: { n: 1 } });

    // With the history off there is nowhere to record it: the job is gone.
    const off = await h.isolated([doomed], { historyRetentionMs: false });
    const { id: gone } = await off.enqueue("doomed-once", { n: 2 }, { delayMs: 60_000 });
    await off.cancel(gone);
    expect(await off.get(gone)).toBeNull();
  });
});

describe("run again after an edited replay", () => {
  it("queues the payload that attempt ran, not the one the replay put in its place", async () => {
    const flaky = defineJob({
      name: "flaky",
      schema: z.object({ n: z.number(), ok: z.boolean().optional() }),
      maxAttempts: 2,
      backoff: { baseMs: 0 },
      handler: (p) => {
        if (!p.ok) throw new Error("not yet");
      },
    });
    const j = await h.isolated([flaky], { concurrency: 5 });
    const { id } = await j.enqueue("flaky", { n: 1 });
    await j.tick({ budgetMs: 5_000 });
    await j.tick({ budgetMs: 5_000 });
    expect((await j.deadLetters.get(id))?.attempts).toBe(2);
    await j.deadLetters.replay(id, { payload: { n: 2, ok: true } });
    expect(await j.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1 });
    const runs = (await j.runs.list({ job: "flaky" })).items;
    const first = runs.find((r) => r.attempt === 1 && r.outcome === "retried");
    const rerun = await j.runs.rerun(first!.id);
    expect((await j.get(rerun.id))?.payload).toEqual({ n: 1 });
    // The run of the edited life reruns the edited payload.
    const edited = runs.find((r) => r.outcome === "succeeded");
    expect((await j.get((await j.runs.rerun(edited!.id)).id))?.payload).toEqual({ n: 2, ok: true });
  });
});

describe("bulk replay's remaining, with a limit below the letters sharing a key", () => {
  it("counts none of the letters the replayed one's key holds, inside the selection or past it", async () => {
    const j = await h.isolated([failing]);
    for (const n of [80, 81, 82]) {
      await j.enqueue("fails", { n }, { idempotencyKey: "same-key" });
      await j.tick({ budgetMs: 5_000 });
    }
    const first = await bulkReplay(h.db, j.tables, { job: "fails", limit: 1 });
    expect(first).toMatchObject({ replayed: [expect.any(String)], remaining: 0 });
  });
});
