// The floor: our own step statements in a tight loop, with no dispatcher
// (no handlers, no timers, no logging). A claim of N, then one statement that
// settles those N and claims the next N, writing their run history as the
// statements of a tick with the default settings do. One statement at a time.
import { fromPg } from "../../src/index.js";
import type { ClaimedRow } from "../../src/store/tick/claim.js";
import { runStep } from "../../src/store/tick/step.js";
import { ourQueue } from "./ours.js";
import type { DrainSystem } from "./system.js";

export const bareSql = async (url: string, database: string): Promise<DrainSystem> => {
  const { pool, jobs, shared } = await ourQueue(url, database);
  const db = fromPg(pool);
  return {
    ...shared,
    name: "bare-sql",
    variant: "step loop",
    async drain(n, concurrency) {
      const started = performance.now();
      let done = 0;
      let held: { rows: ClaimedRow[]; owner: string } = { rows: [], owner: "" };
      for (;;) {
        const owner = crypto.randomUUID();
        const result = await runStep(db, jobs.tables, {
          complete: held.rows.map((r) => ({ id: r.id, owner: held.owner, durationMs: 0, history: {} })),
          claim: { limit: concurrency, owner, leaseMs: 60_000 },
          history: true,
        });
        done += result.completed.length;
        if (result.claimed.length === 0) break;
        held = { rows: result.claimed, owner };
      }
      const ms = performance.now() - started;
      if (done !== n) throw new Error(`bare-sql: completed ${done} of ${n}`);
      return { ms };
    },
  };
};
