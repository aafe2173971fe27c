// The floor: our own step statements in a tight loop, with no dispatcher
// (no handlers, no timers, no logging). A claim of N, then one statement that
// settles those N and claims the next N.
import pg from "pg";
import { fromPg } from "../../src/index.js";
import type { ClaimedRow } from "../../src/store/claim.js";
import { runStep } from "../../src/store/step.js";
import { ourJobs } from "./ours.js";
import { chunks, type DrainSystem, payloadOf } from "./system.js";

export const bareSql = async (url: string, database: string): Promise<DrainSystem> => {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const { jobs } = ourJobs(pool);
  const db = fromPg(pool);
  await jobs.migrate();
  return {
    name: "bare-sql",
    variant: "step loop",
    recommended: true,
    database,
    async fill(n, chunk) {
      for (const items of chunks(n, chunk, (i) => ({ job: "noop" as const, payload: payloadOf(i) }))) await jobs.enqueueMany(items);
    },
    async drain(n, concurrency) {
      const started = performance.now();
      let done = 0;
      let held: { rows: ClaimedRow[]; owner: string } = { rows: [], owner: "" };
      for (;;) {
        const owner = crypto.randomUUID();
        const result = await runStep(db, jobs.tables, {
          complete: held.rows.map((r) => ({ id: r.id, owner: held.owner, durationMs: 0 })),
          claim: { limit: concurrency, owner, leaseMs: 60_000 },
        });
        done += result.completed.length;
        if (result.claimed.length === 0) break;
        held = { rows: result.claimed, owner };
      }
      const ms = performance.now() - started;
      if (done !== n) throw new Error(`bare-sql: completed ${done} of ${n}`);
      return { ms };
    },
    async remaining() {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`);
      return rows[0]?.n ?? -1;
    },
    async reset() {},
    close: () => pool.end(),
  };
};
