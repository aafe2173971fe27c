// Operators' bulk actions on dead letters racing each other: each statement locks the letters it
// deletes in one order (their ids), so a replay by ids and one by filter crossing the same letters
// wait for each other instead of deadlocking.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, PermanentJobError } from "../src/index.js";
import { classify } from "../src/http/api-errors.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("replay_races");
const dies = defineJob({ name: "dies", schema: z.object({ n: z.number() }), handler: () => { throw new PermanentJobError("no"); } });

/** Dead letters of `dies` written directly: these three ids (the oldest, stored out of age order) and `more` others. */
const letters = async (table: string, ids: string[], more: number) => {
  const insert = (id: string, hoursAgo: number) =>
    h.rows(`INSERT INTO ${table} (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
            VALUES ($1, 'dies', '{"n":1}', 1, 1, 'permanent', now(), now() - $2 * interval '1 hour')`, [id, hoursAgo]);
  // Stored L2, L3, L1: a scan in physical order meets them in another order than their age (L1, L2, L3).
  await insert(ids[1]!, 9);
  await insert(ids[2]!, 8);
  await insert(ids[0]!, 10);
  await h.rows(`INSERT INTO ${table} (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
                SELECT gen_random_uuid(), 'dies', '{"n":2}', 1, 1, 'permanent', now(), now() - random() * interval '1 hour' FROM generate_series(1, ${more})`);
  await h.rows(`ANALYZE ${table}`);
};

describe("bulk actions on the same dead letters at once", () => {
  it("a replay by ids and one by filter both finish (they deadlocked: 40P01, a 500 over HTTP), and each letter is replayed once", async () => {
    const a = await h.isolated([dies]);
    const b = h.make([dies], { tablePrefix: a.tables.prefix });
    const ids = ["00000000-0000-7000-8000-000000000001", "00000000-0000-7000-8000-000000000002", "00000000-0000-7000-8000-000000000003"];
    await letters(a.tables.deadLetters, ids, 2_000);
    // A third session holds the youngest of the three for a moment, as another replay or discard would.
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM ${a.tables.deadLetters} WHERE id = $1 FOR UPDATE`, [ids[2]]);
      const byIds = b.deadLetters.replayMany({ ids });
      await sleep(300);
      const byFilter = a.deadLetters.replayMany({ job: "dies", limit: 1_000 });
      await sleep(300);
      await holder.query("ROLLBACK");
      const [x, y] = await Promise.all([byIds, byFilter]);
      const all = [...x.replayed, ...y.replayed];
      expect(new Set(all).size).toBe(all.length);
      for (const id of ids) expect(all).toContain(id);
      const queued = await h.rows<{ id: string }>(`SELECT id::text FROM ${a.tables.queue}`);
      expect(queued.map((r) => r.id).sort()).toEqual([...all].sort());
      const left = await h.rows<{ n: string }>(`SELECT count(*) AS n FROM ${a.tables.deadLetters}`);
      expect(all.length + Number(left[0]!.n)).toBe(2_003);
    } finally {
      holder.release();
    }
  });

  it("a discard of many and a replay by filter crossing the same letters both finish", async () => {
    const a = await h.isolated([dies]);
    const ids = ["00000000-0000-7000-8000-00000000000a", "00000000-0000-7000-8000-00000000000b", "00000000-0000-7000-8000-00000000000c"];
    await letters(a.tables.deadLetters, ids, 500);
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM ${a.tables.deadLetters} WHERE id = $1 FOR UPDATE`, [ids[2]]);
      const discard = a.deadLetters.discardMany([...ids].reverse());
      await sleep(300);
      const replay = a.deadLetters.replayMany({ job: "dies", limit: 1_000 });
      await sleep(300);
      await holder.query("ROLLBACK");
      const [discarded, replayed] = await Promise.all([discard, replay]);
      for (const id of ids) expect(discarded.discarded.includes(id) !== replayed.replayed.includes(id)).toBe(true);
    } finally {
      holder.release();
    }
  });

  it("a replay by filter and a tick's cleanup of old letters both finish (the cleanup took them in its plan's order: 40P01)", async () => {
    const a = await h.isolated([dies], { deadLetterRetentionMs: 60_000 });
    await h.rows(`INSERT INTO ${a.tables.deadLetters} (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
                  SELECT gen_random_uuid(), 'dies', '{"n":1}', 1, 1, 'permanent', now() - interval '2 days', now() - interval '2 days' - i * interval '1 second'
                  FROM generate_series(1, 3000) i`);
    await h.rows(`ANALYZE ${a.tables.deadLetters}`);
    const first = (await h.rows<{ first: string }>(`SELECT min(id::text) AS first FROM (SELECT id FROM ${a.tables.deadLetters} ORDER BY dead_at, id LIMIT 1000) s`))[0]!.first;
    // A tick with work takes a slot, and its final statement cleans up old letters.
    await a.enqueue("dies", { n: 0 });
    const deadlocks = async () => {
      // Backends report their counters within a second of going idle.
      await sleep(1_500);
      return (await h.rows<{ n: number }>(`SELECT pg_stat_clear_snapshot(), (SELECT deadlocks FROM pg_stat_database WHERE datname = current_database())::int AS n`))[0]!.n;
    };
    const before = await deadlocks();
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM ${a.tables.deadLetters} WHERE id = $1 FOR UPDATE`, [first]);
      const replay = a.deadLetters.replayMany({ job: "dies", limit: 1_000 });
      await sleep(300);
      const tick = a.tick({ budgetMs: 5_000 });
      await sleep(500);
      await holder.query("COMMIT");
      const [replayed, report] = await Promise.all([replay, tick]);
      expect(replayed.replayed.length).toBeGreaterThan(0);
      expect(report.cleaned).toMatchObject({ ran: true });
    } finally {
      holder.release();
    }
    // Neither was the victim: a tick that was would have sent its statement again, unseen.
    expect(await deadlocks()).toBe(before);
  });

  it("a deadlock that still happens is a conflict to try again, not a server fault", () => {
    expect(classify(Object.assign(new Error("deadlock detected"), { code: "40P01" }))).toMatchObject({ code: "conflict", fault: false });
  });
});
