// Profiling aid (not part of `npm run bench`): the bare settle-and-claim loop with run history
// written by the settle (as a tick with history on does) and without, alternating rounds, with
// the server's execution time per step from pg_stat_statements.
//   npx tsx bench/profile/history-step.ts [n] [concurrency] [rounds]
import pg from "pg";
import { fromPg } from "../../src/index.js";
import type { ClaimedRow } from "../../src/store/tick/claim.js";
import { runStep } from "../../src/store/tick/step.js";
import { startServer } from "../server.js";
import { ourJobs } from "../systems/ours.js";
import { chunks, payloadOf } from "../systems/system.js";

const n = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 32);
const rounds = Number(process.argv[4] ?? 3);
const server = await startServer();
try {
  const setups = [];
  for (const history of [true, false]) {
    const database = `bench_history_step_${history ? "on" : "off"}`;
    const pool = new pg.Pool({ connectionString: await server.createDatabase(database), max: 1 });
    const { jobs } = ourJobs(pool, concurrency);
    await jobs.migrate();
    setups.push({ history, pool, jobs, db: fromPg(pool) });
  }
  for (let round = 0; round < rounds; round++) {
    for (const { history, pool, jobs, db } of round % 2 === 0 ? setups : [...setups].reverse()) {
      for (const items of chunks(n, 1_000, (i) => ({ job: "noop" as const, payload: payloadOf(i) }))) await jobs.enqueueMany(items);
      await pool.query("VACUUM (ANALYZE)");
      if (server.statStatements) await pool.query("SELECT pg_stat_statements_reset()");
      let held: { rows: ClaimedRow[]; owner: string } = { rows: [], owner: "" };
      let steps = 0;
      const started = performance.now();
      for (;;) {
        const owner = crypto.randomUUID();
        const result = await runStep(db, jobs.tables, {
          complete: held.rows.map((r) => ({ id: r.id, owner: held.owner, durationMs: 0, history: history ? {} : undefined })),
          claim: { limit: concurrency, owner, leaseMs: 60_000 },
          history,
        });
        steps++;
        if (result.claimed.length === 0) break;
        held = { rows: result.claimed, owner };
      }
      const ms = performance.now() - started;
      let exec = "";
      if (server.statStatements) {
        const { rows } = await pool.query<{ mean: number }>(
          `SELECT sum(total_exec_time) / sum(calls) AS mean FROM pg_stat_statements WHERE query LIKE '%claimed AS%' AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        exec = `, ${Number(rows[0]?.mean ?? 0).toFixed(3)} ms server time per step`;
      }
      console.log(`round ${round + 1} history ${history ? "on " : "off"}: ${Math.round(n / (ms / 1000)).toString().padStart(6)} jobs/s, ${(ms / steps).toFixed(3)} ms per step${exec}`);
    }
  }
  for (const s of setups) await s.pool.end();
} finally {
  await server.stop();
}
