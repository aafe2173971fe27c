// Upgrades are live: the current migrations apply to a 0.1.0 database while jobs are queued and
// running under a 0.1.0 tick, and that release's statements (recorded from its code, see
// test/fixtures/release-0.1.0) keep working beside current ticks during the rolling deploy.
import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, fromPg, memoryLogger, PermanentJobError } from "../src/index.js";
import { migrate } from "../src/migrate.js";
import { migrations } from "../src/migrations.generated.js";
import { freshDatabase } from "./support/db.js";

interface Recorded {
  readonly step: string;
  readonly text: string;
  readonly params: unknown[];
}
const recorded = JSON.parse(readFileSync(new URL("./fixtures/release-0.1.0/statements.json", import.meta.url), "utf8")) as Recorded[];

const database = await freshDatabase("upgrade");
const pool = new pg.Pool({ connectionString: database.url, max: 6 });
pool.on("error", () => {});
afterAll(async () => {
  await pool.end();
  await database.drop();
});
const db = fromPg(pool);

// The recording's ids (jobs, lease owners) mapped to fresh ones, the same way in every statement,
// so the replay is the same scenario on new rows.
const ids = new Map<string, string>();
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const mapIds = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value).replace(UUID, (id) => {
    if (id === "00000000-0000-0000-0000-000000000000") return id;
    let fresh = ids.get(id);
    if (!fresh) ids.set(id, (fresh = crypto.randomUUID()));
    return fresh;
  }));
let next = 0;
/** Sends the next recorded 0.1.0 statement and returns its first row. */
const old = async (step: string): Promise<Record<string, unknown>> => {
  const r = recorded[next++]!;
  expect(r.step).toBe(step);
  const { rows } = await pool.query(r.text, mapIds(r.params) as unknown[]);
  return (rows[0] ?? {}) as Record<string, unknown>;
};

const handlers = [
  defineJob({ name: "ok", schema: z.object({ n: z.number() }), handler: () => {} }),
  defineJob({ name: "fail", schema: z.object({}), maxAttempts: 2, handler: () => { throw new Error("boom"); } }),
  defineJob({ name: "perm", schema: z.object({}), handler: () => { throw new PermanentJobError("nope"); } }),
  defineJob({ name: "slow", schema: z.object({}), handler: () => {} }),
];

it("migrates a 0.1.0 database with running jobs, and 0.1.0 ticks keep working beside current ones", async () => {
  expect(await migrate(db, "jobs_", migrations.filter((m) => m.version <= 3))).toEqual([1, 2, 3]);

  // 0.1.0 enqueues five jobs and its tick claims all of them: they are running under its lease.
  await old("enqueue-plain");
  await old("enqueue-keyed");
  await old("enqueue-many");
  const first = await old("tick");
  expect((first.claimed as unknown[]).length).toBe(5);

  // The deploy's migration runs now, while those jobs run.
  const applied = await migrate(db, "jobs_");
  expect(applied[0]).toBe(4);
  expect(applied).toEqual(migrations.filter((m) => m.version > 3).map((m) => m.version));

  // A current tick beside it: it runs what it enqueued and leaves the old tick's leased jobs alone.
  const logger = memoryLogger();
  const current = createJobs({ db: pool, jobs: handlers, logger, settings: { leaseMarginMs: 1_000 } });
  await current.enqueue("ok", { n: 100 });
  expect(await current.tick({ budgetMs: 5_000 })).toMatchObject({ claimed: 1, succeeded: 1, leaseLost: 0 });

  // The old tick goes on: schedules sync, its settle, another claim, the deadline requeue with its
  // report, a late completion refused by the fence, a replay, a bulk replay, a schedule occurrence.
  await old("tick");
  await old("tick");
  const settled = await old("tick");
  expect(settled).toMatchObject({ completed: expect.any(Array), retried: [expect.any(String)], deadLettered: [expect.any(String)] });
  expect((settled.completed as unknown[]).length).toBe(2);
  await old("tick");
  const requeued = await old("tick");
  expect((requeued.requeued as unknown[]).length).toBe(1);
  expect((await old("tick")).completed).toEqual([]);
  expect((await old("replay")).id).toEqual(expect.any(String));
  await old("bulk-replay");
  expect((await old("schedule-tick")).advanced).toEqual(["every-minute"]);
  expect(next).toBe(recorded.length);

  // The current ticks then take over what the old one left: the requeued, the replayed, the occurrence.
  const report = await current.tick({ budgetMs: 5_000 });
  expect(report).toMatchObject({ succeeded: 2, deadLettered: 1, leaseLost: 0 });
  const { rows: left } = await pool.query<{ job_name: string; status: string }>(`SELECT job_name, status FROM jobs_queue ORDER BY job_name`);
  // Only the retried "fail", waiting for its backoff.
  expect(left).toEqual([{ job_name: "fail", status: "queued" }]);
  expect(logger.entries.filter((e) => e.level === "error" && e.msg !== "job dead-lettered")).toEqual([]);
});
