// Profiling aid (not part of `npm run bench`): fills a queue, then runs the
// tick's settle-and-claim statement in a loop and prints EXPLAIN (ANALYZE,
// BUFFERS) of one step in the middle of the drain, plus where the time goes
// (server execution vs round trip) from pg_stat_statements.
//   npx tsx bench/profile/explain.ts [n] [concurrency]
import pg from "pg";
import type { ClaimedRow } from "../../src/store/tick/claim.js";
import { buildStep, runStep, type StepInput } from "../../src/store/tick/step.js";
import { fromPg } from "../../src/index.js";
import { startServer } from "../server.js";
import { ourJobs } from "../systems/ours.js";
import { chunks, payloadOf } from "../systems/system.js";

const n = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 32);
const server = await startServer();
try {
  const url = await server.createDatabase("bench_explain");
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const { jobs } = ourJobs(pool);
  const db = fromPg(pool);
  await jobs.migrate();
  for (const items of chunks(n, 1_000, (i) => ({ job: "noop" as const, payload: payloadOf(i) }))) await jobs.enqueueMany(items);
  await server.admin("bench_explain", "VACUUM (ANALYZE)");
  if (server.statStatements) await server.admin("bench_explain", "SELECT pg_stat_statements_reset()");

  let held: { rows: ClaimedRow[]; owner: string } = { rows: [], owner: "" };
  let steps = 0;
  const started = performance.now();
  for (;;) {
    const owner = crypto.randomUUID();
    const input: StepInput = {
      complete: held.rows.map((r) => ({ id: r.id, owner: held.owner, durationMs: 0 })),
      claim: { limit: concurrency, owner, leaseMs: 60_000 },
    };
    if (steps === Math.floor(n / concurrency / 2)) {
      const statement = buildStep(jobs.tables, input)!;
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, VERBOSE false) ${statement.text}`, statement.values);
        console.log(plan.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n"));
        await client.query("ROLLBACK");
      } finally {
        client.release();
      }
    }
    const result = await runStep(db, jobs.tables, input);
    steps++;
    if (result.claimed.length === 0) break;
    held = { rows: result.claimed, owner };
  }
  const ms = performance.now() - started;
  console.log(`\n${steps} steps, ${(ms / steps).toFixed(3)} ms per step wall, ${Math.round(n / (ms / 1000))} jobs/s`);
  if (server.statStatements) {
    const rows = await server.admin<{ calls: string; mean: number; total: number; q: string }>(
      "bench_explain",
      `SELECT calls, mean_exec_time AS mean, total_exec_time AS total, left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS q
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
       ORDER BY total_exec_time DESC LIMIT 5`,
    );
    for (const r of rows) console.log(`${r.calls} calls, ${Number(r.mean).toFixed(3)} ms mean exec: ${r.q}`);
  }
  await pool.end();
} finally {
  await server.stop();
}
