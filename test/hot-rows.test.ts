// A busy tick's statements all touch two rows: its slot row (the counts it reports) and the minute's
// metrics row of the job. Written by every statement, they made each statement wait on the one
// before it and walk that row's dead versions; a no-op drain spent about a quarter of its time there.
// A busy tick writes them about once a second (the statements between return their counts and
// metrics, and the next writer adds them), and its final statement writes the rest: the totals are
// the same. Writes counted by triggers.
import { expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("hot_rows");

it("a draining tick writes its slot row and its metrics about once a second, and they add up", async () => {
  const noop = defineJob({ name: "noop", schema: z.object({ i: z.number() }), handler: () => {} });
  const jobs = await h.isolated([noop]);
  const t = jobs.tables;
  await h.db.query(`CREATE TABLE ${t.prefix}writes (target text NOT NULL)`);
  await h.db.query(
    `CREATE FUNCTION ${t.prefix}count_write() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN INSERT INTO ${t.prefix}writes VALUES (TG_TABLE_NAME); RETURN NULL; END $$`,
  );
  for (const table of [t.ticks, t.metrics]) {
    await h.db.query(`CREATE TRIGGER count_writes AFTER INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${t.prefix}count_write()`);
  }
  await jobs.enqueueMany(Array.from({ length: 3_000 }, (_, i) => ({ job: "noop" as const, payload: { i } })));

  const report = await jobs.tick({ budgetMs: 30_000, concurrency: 10, batchSize: 10 });
  expect(report.succeeded).toBe(3_000);
  expect(report.statements).toBeGreaterThan(200);
  const writes = await h.rows<{ target: string; n: number }>(`SELECT target, count(*)::int AS n FROM ${t.prefix}writes GROUP BY target ORDER BY target`);
  // The first statement (it takes the slot), one per second of draining, the final one, and one
  // more metrics row should the drain cross a minute.
  const most = Math.ceil(report.durationMs / 1_000) + 3;
  for (const w of writes) expect(w.n, `${w.target} written ${w.n} times in ${report.durationMs} ms`).toBeLessThanOrEqual(most);
  expect(writes.map((w) => w.target).sort()).toEqual([t.metrics, t.ticks].map((n) => n.replace(/^.*\./, "")).sort());

  const [metrics] = await h.rows<{ succeeded: number; runs: number }>(
    `SELECT (SELECT sum(succeeded)::int FROM ${t.metrics}) AS succeeded, (SELECT sum(h)::int FROM ${t.metrics}, unnest(duration_hist) h) AS runs`,
  );
  expect(metrics).toEqual({ succeeded: 3_000, runs: 3_000 });
  const [row] = await h.rows<{ claimed: number; succeeded: number }>(`SELECT claimed, succeeded FROM ${t.ticks} WHERE claimed > 0`);
  expect(row).toEqual({ claimed: 3_000, succeeded: 3_000 });
});
