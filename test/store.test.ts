// Every state transition, proven at the SQL level, over node-postgres AND the
// Neon serverless Pool (through a local WebSocket-to-TCP proxy to the same server).
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, type Db, fromPg } from "../src/index.js";
import { runStep } from "../src/store/tick/step.js";
import pg from "pg";
import { harness } from "./support/harness.js";
import { neonForFile } from "./support/neon.js";

const h = await harness("store");
const neon = neonForFile(h.url);

const job = defineJob({ name: "work", schema: z.object({ n: z.number() }), handler: () => {} });

const drivers: Array<[string, () => Db]> = [
  ["pg", () => fromPg(h.pool(4))],
  ["neon Pool over WebSocket", () => neon.db(4)],
];

describe("prepared statements", () => {
  it.each([
    [true, 1],
    [false, 0],
  ])("with prepare %s, the tick's steps are named statements on the connection (%i)", async (prepare, expected) => {
    const client = new pg.Client({ connectionString: h.url });
    await client.connect();
    try {
      const own = await h.isolated([job]);
      const jobs = h.make([job], { tablePrefix: own.settings.tablePrefix }, fromPg(client, { prepare }));
      await jobs.enqueue("work", { n: 1 });
      await runStep(jobs.db, jobs.tables, { claim: { limit: 1, owner: crypto.randomUUID(), leaseMs: 1_000 } });
      await runStep(jobs.db, jobs.tables, { claim: { limit: 1, owner: crypto.randomUUID(), leaseMs: 1_000 } });
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'pgtick_%'`);
      expect(rows[0]!.n).toBe(expected);
    } finally {
      await client.end();
    }
  });
});

describe.each(drivers)("store transitions over %s", (_label, connect) => {
  let db: Db;
  let jobs: ReturnType<typeof h.make<[typeof job]>>;
  // Each driver has tables of its own, so one driver's rows can never satisfy the other's assertions.
  beforeAll(async () => {
    db = connect();
    jobs = await h.isolated([job], {}, db);
  });
  const t = () => jobs.tables;
  const owner = () => crypto.randomUUID();
  const row = async (id: string) => (await db.query<Record<string, unknown>>(`SELECT * FROM ${t().queue} WHERE id = $1`, [id])).rows[0];
  const dead = async (id: string) => (await db.query<Record<string, unknown>>(`SELECT * FROM ${t().deadLetters} WHERE id = $1`, [id])).rows[0];
  const freshJob = async (n: number, opts: { maxAttempts?: number } = {}) => {
    await db.query(`UPDATE ${t().queue} SET run_at = now() + interval '1 day' WHERE status = 'queued'`);
    return (await jobs.enqueue("work", { n }, opts)).id;
  };
  const claimOne = async (leaseMs = 60_000) => {
    const o = owner();
    const result = await runStep(db, t(), { claim: { limit: 1, owner: o, leaseMs } });
    expect(result.claimed).toHaveLength(1);
    return { owner: o, row: result.claimed[0]! };
  };

  it("claim marks the row running under a fresh lease token and counts the attempt", async () => {
    const id = await freshJob(1);
    const { owner: o, row: claimed } = await claimOne();
    expect(claimed.id).toBe(id);
    expect(claimed.payload).toEqual({ n: 1 });
    expect(claimed.attempt).toBe(1);
    const stored = await row(id);
    expect(stored).toMatchObject({ status: "running", lease_owner: o, attempt: 1 });
    expect(new Date(stored!.lease_expires_at as string).getTime()).toBeGreaterThan(Date.now() + 50_000);
  });

  it("claim skips rows that are not due, and takes higher priority first", async () => {
    await db.query(`UPDATE ${t().queue} SET run_at = now() + interval '1 day' WHERE status = 'queued'`);
    await jobs.enqueue("work", { n: 2 }, { delayMs: 60_000 });
    const low = await jobs.enqueue("work", { n: 3 }, { priority: 0 });
    const high = await jobs.enqueue("work", { n: 4 }, { priority: 5 });
    const result = await runStep(db, t(), { claim: { limit: 5, owner: owner(), leaseMs: 60_000 } });
    expect(result.claimed.map((r) => r.id)).toEqual([high.id, low.id]);
  });

  it("complete deletes the job; metrics count it", async () => {
    const metrics = async () =>
      (await db.query<{ succeeded: number; sum: number }>(
        `SELECT coalesce(sum(succeeded), 0)::int AS succeeded, coalesce(sum(duration_ms_sum), 0)::int AS sum FROM ${t().metrics} WHERE job_name = 'work'`,
      )).rows[0]!;
    const before = await metrics();
    const id = await freshJob(5);
    const { owner: o } = await claimOne();
    const result = await runStep(db, t(), { complete: [{ id, owner: o, durationMs: 12 }] });
    expect(result.completed).toEqual([id]);
    expect(await row(id)).toBeUndefined();
    // Exactly this completion, counted by this statement.
    expect(await metrics()).toEqual({ succeeded: before.succeeded + 1, sum: before.sum + 12 });
  });

  it("retry releases the lease and schedules the next attempt after the backoff", async () => {
    const id = await freshJob(6);
    const { owner: o } = await claimOne();
    const result = await runStep(db, t(), { retry: [{ id, owner: o, durationMs: 3, delayMs: 30_000, error: "boom" }] });
    expect(result.retried).toEqual([id]);
    const stored = await row(id);
    expect(stored).toMatchObject({ status: "queued", lease_owner: null, lease_expires_at: null, last_error: "boom", attempt: 1 });
    const delay = new Date(stored!.run_at as string).getTime() - Date.now();
    expect(delay).toBeGreaterThan(20_000);
    expect(delay).toBeLessThan(40_000);
  });

  it("dead-letter moves the job with its reason, payload and attempts", async () => {
    const id = await freshJob(7, { maxAttempts: 3 });
    const { owner: o } = await claimOne();
    const result = await runStep(db, t(), { deadLetter: [{ id, owner: o, durationMs: 1, error: "gone", reason: "permanent" }] });
    expect(result.deadLettered).toEqual([id]);
    expect(await row(id)).toBeUndefined();
    expect(await dead(id)).toMatchObject({ job_name: "work", payload: { n: 7 }, attempts: 1, max_attempts: 3, reason: "permanent", last_error: "gone" });
  });

  it("requeue returns a running job to the queue, claimable at once", async () => {
    const id = await freshJob(8);
    const { owner: o } = await claimOne();
    const result = await runStep(db, t(), { requeue: [{ id, owner: o, durationMs: 1 }] });
    expect(result.requeued).toEqual([id]);
    expect(await row(id)).toMatchObject({ status: "queued", lease_owner: null, attempt: 1 });
    const again = await claimOne();
    expect(again.row.id).toBe(id);
    expect(again.row.attempt).toBe(2);
  });

  it("requeue of a job on its last attempt dead-letters it with reason deadline", async () => {
    const id = await freshJob(9, { maxAttempts: 1 });
    const { owner: o } = await claimOne();
    const result = await runStep(db, t(), { requeue: [{ id, owner: o, durationMs: 1 }] });
    expect(result.requeueExhausted).toEqual([id]);
    expect(await dead(id)).toMatchObject({ reason: "deadline", attempts: 1 });
  });

  it("every write is fenced: a stale lease token changes zero rows", async () => {
    const id = await freshJob(10);
    const stale = await claimOne();
    // The stale run lost its lease: another claim took the row over.
    await db.query(`UPDATE ${t().queue} SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const reclaim = await runStep(db, t(), { reclaim: { limit: 10 } });
    expect(reclaim.reclaimed).toContain(id);
    const fresh = await claimOne();
    const before = await row(id);
    const result = await runStep(db, t(), {
      complete: [{ id, owner: stale.owner, durationMs: 1 }],
    });
    const r2 = await runStep(db, t(), { retry: [{ id, owner: stale.owner, durationMs: 1, delayMs: 0, error: "x" }] });
    const r3 = await runStep(db, t(), { deadLetter: [{ id, owner: stale.owner, durationMs: 1, error: "x", reason: "permanent" }] });
    const r4 = await runStep(db, t(), { requeue: [{ id, owner: stale.owner, durationMs: 1 }] });
    expect([result.completed, r2.retried, r3.deadLettered, r4.requeued, r4.requeueExhausted]).toEqual([[], [], [], [], []]);
    expect(await row(id)).toEqual(before);
    expect(await dead(id)).toBeUndefined();
    // The owner's own write still lands.
    const ok = await runStep(db, t(), { complete: [{ id, owner: fresh.owner, durationMs: 1 }] });
    expect(ok.completed).toEqual([id]);
  });

  it("reclaim dead-letters an expired lease on its last attempt instead of running it again", async () => {
    const id = await freshJob(11, { maxAttempts: 1 });
    await claimOne();
    await db.query(`UPDATE ${t().queue} SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const result = await runStep(db, t(), { reclaim: { limit: 10 } });
    expect(result.reclaimExhausted).toEqual([id]);
    expect(await dead(id)).toMatchObject({ reason: "lease_expired", attempts: 1 });
  });

  it("one statement settles many jobs and claims the next batch", async () => {
    await db.query(`UPDATE ${t().queue} SET run_at = now() + interval '1 day' WHERE status = 'queued'`);
    const ids = (await jobs.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ job: "work" as const, payload: { n } })))).map((r) => r.id);
    const o = owner();
    const first = await runStep(db, t(), { claim: { limit: 3, owner: o, leaseMs: 60_000 } });
    const o2 = owner();
    const second = await runStep(db, t(), {
      complete: first.claimed.slice(0, 2).map((r) => ({ id: r.id, owner: o, durationMs: 1 })),
      retry: [{ id: first.claimed[2]!.id, owner: o, durationMs: 1, delayMs: 60_000, error: "later" }],
      claim: { limit: 3, owner: o2, leaseMs: 60_000 },
    });
    expect(second.completed).toHaveLength(2);
    expect(second.retried).toHaveLength(1);
    expect(new Set(second.claimed.map((r) => r.id))).toEqual(new Set(ids.filter((id) => !first.claimed.some((r) => r.id === id))));
  });
});
