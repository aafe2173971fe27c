// Profiling aid (not part of `npm run bench`): the bare settle-and-claim loop with flow control,
// for the no-op job with no limits, a concurrency limit and a rate limit that never bind (100
// keys), so the admission's cost shows without the dispatcher. `--per-key` rewrites, in this
// scratch database only, flow_admit's per-key row limit from p_want to ceil(p_want / keys),
// to see what the rows locked ahead of the admission cost.
//   npx tsx bench/profile/flow-step.ts [n] [concurrency] [maxKeys] [--per-key]
import pg from "pg";
import { fromPg } from "../../src/index.js";
import { flowSpec } from "../../src/flow/spec.js";
import type { ClaimedRow } from "../../src/store/tick/claim.js";
import { runStep } from "../../src/store/tick/step.js";
import { concurrencyLimited, rateLimited } from "../measure/flow-jobs.js";
import { startServer } from "../server.js";
import { type NoopJob, noop, ourJobs } from "../systems/ours.js";
import { chunks, payloadOf } from "../systems/system.js";

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const perKey = process.argv.includes("--per-key");
const n = Number(args[0] ?? 20_000);
const concurrency = Number(args[1] ?? 32);
const maxKeys = Number(args[2] ?? Math.min(50, Math.max(8, 2 * concurrency)));
const server = await startServer();
try {
  for (const [name, job] of [["none", noop], ["concurrency", concurrencyLimited], ["rate", rateLimited]] as [string, NoopJob][]) {
    const database = `bench_flow_step_${name}`;
    const pool = new pg.Pool({ connectionString: await server.createDatabase(database), max: 1 });
    const { jobs } = ourJobs(pool, concurrency, { job });
    await jobs.migrate();
    if (perKey) {
      const { rows } = await pool.query<{ def: string }>(`SELECT pg_get_functiondef('jobs_flow_admit'::regproc) AS def`);
      const def = rows[0]!.def.replace(/LIMIT p_want\s+FOR UPDATE OF q SKIP LOCKED/, "LIMIT ceil(p_want::numeric / cardinality(v_keys))::int FOR UPDATE OF q SKIP LOCKED");
      if (def === rows[0]!.def) throw new Error("flow_admit: the per-key limit was not found");
      await pool.query(def);
    }
    for (const items of chunks(n, 1_000, (i) => ({ job: "noop" as const, payload: payloadOf(i) }))) await jobs.enqueueMany(items);
    await pool.query("VACUUM (ANALYZE)");
    if (server.statStatements) await pool.query("SELECT pg_stat_statements_reset()");
    const db = fromPg(pool);
    const spec = flowSpec(jobs.registry);
    const flow = { limitsJson: spec.limitsJson, split: spec.enabled, cursor: "", maxKeys };
    let held: { rows: ClaimedRow[]; owner: string } = { rows: [], owner: "" };
    let steps = 0;
    let done = 0;
    const started = performance.now();
    for (;;) {
      const owner = crypto.randomUUID();
      const result = await runStep(db, jobs.tables, {
        complete: held.rows.map((r) => ({ id: r.id, owner: held.owner, durationMs: 0 })),
        claim: { limit: concurrency, owner, leaseMs: 60_000, flow },
      });
      steps++;
      done += result.completed.length;
      flow.cursor = result.flowCursor ?? flow.cursor;
      if (result.claimed.length === 0) break;
      held = { rows: result.claimed, owner };
    }
    const ms = performance.now() - started;
    if (done !== n) throw new Error(`${name}: completed ${done} of ${n}`);
    let exec = "";
    if (server.statStatements) {
      const { rows } = await pool.query<{ mean: number }>(
        `SELECT max(mean_exec_time) AS mean FROM pg_stat_statements WHERE query LIKE '%claimed AS%' AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      exec = `, ${Number(rows[0]?.mean ?? 0).toFixed(3)} ms server time per step`;
    }
    console.log(`${name.padEnd(12)} ${Math.round(n / (ms / 1000)).toString().padStart(6)} jobs/s, ${(ms / steps).toFixed(3)} ms per step${exec} (c=${concurrency}, maxKeys ${maxKeys}${perKey ? ", per-key limit" : ""})`);
    await pool.end();
  }
} finally {
  await server.stop();
}
