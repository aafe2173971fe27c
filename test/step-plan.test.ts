// The tick's step is a named prepared statement, so the server can plan it once per connection.
// It only does when the generic plan looks no worse than the custom ones: a claim limit the
// planner could read as a constant made every custom plan cheaper, and each step was planned anew
// (about 0.7 ms of a 2-3 ms step at concurrency 32, with 20,000 jobs queued and the queue analyzed).
// Counted on the connection itself.
import { expect, it } from "vitest";
import { z } from "zod";
import { defineJob, fromPg } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("step_plan");

it("a draining tick reuses one generic plan for its settle-and-claim step", async () => {
  const pool = h.pool(1);
  const noop = defineJob({ name: "noop", schema: z.object({ i: z.number() }), handler: () => {} });
  const jobs = await h.isolated([noop], {}, pool);
  await jobs.enqueueMany(Array.from({ length: 20_000 }, (_, i) => ({ job: "noop" as const, payload: { i } })));
  await h.db.query(`VACUUM (ANALYZE) ${jobs.tables.queue}`);
  // Statistics that change mid-drain (autovacuum's analyze) invalidate the plan, and the server
  // then weighs the new generic plan against custom costs averaged under the old statistics,
  // trying custom plans for a while: a matter of when autovacuum runs, not of the statement.
  const { rows: tables } = await h.db.query<{ name: string }>(
    `SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relname LIKE $1`, [`${jobs.settings.tablePrefix}%`]);
  for (const { name } of tables) await h.db.query(`ALTER TABLE ${name} SET (autovacuum_enabled = false)`);
  const report = await jobs.tick({ budgetMs: 30_000, concurrency: 32, batchSize: 32 });
  expect(report.succeeded).toBe(20_000);
  // The pool has one connection: this runs where the tick's statements were prepared.
  const { rows } = await fromPg(pool).query<{ generic: number; custom: number }>(
    `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements
     WHERE name LIKE 'pgtick_%' ORDER BY generic_plans + custom_plans DESC LIMIT 1`,
  );
  // The server tries five custom plans before it weighs the generic one.
  const { generic, custom } = rows[0]!;
  expect(generic + custom).toBeGreaterThanOrEqual(100);
  expect(generic, `${generic} generic plans, ${custom} custom`).toBeGreaterThanOrEqual(0.95 * (generic + custom));
});
