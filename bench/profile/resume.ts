// Profiling aid (not part of `npm run bench`): what a claim of 32 costs as jobs claimed since the
// last vacuum pile up dead entries at the head of the dispatch index, when it starts at the head
// and when it resumes after the previous claim (autovacuum off for the queue, so none is removed).
//   npx tsx bench/profile/resume.ts [n] [marks, comma-separated]
import pg from "pg";
import { fromPg } from "../../src/index.js";
import type { DispatchPosition } from "../../src/store/tick/claim.js";
import { buildStep, runStep } from "../../src/store/tick/step.js";
import { startServer } from "../server.js";
import { ourJobs } from "../systems/ours.js";
import { chunks, payloadOf } from "../systems/system.js";

interface PlanNode { "Index Name"?: string; "Shared Hit Blocks"?: number; Plans?: PlanNode[] }
const pages = (node: PlanNode, index: string): number =>
  (node["Index Name"] === index ? (node["Shared Hit Blocks"] ?? 0) : 0) + (node.Plans ?? []).reduce((s, c) => s + pages(c, index), 0);

const marks = (process.argv[3] ?? "0,20000,60000,120000").split(",").map(Number);
const n = Number(process.argv[2] ?? Math.max(...marks) + 2_000);
const server = await startServer();
try {
  const pool = new pg.Pool({ connectionString: await server.createDatabase("bench_resume"), max: 2 });
  pool.on("error", () => {});
  const { jobs } = ourJobs(pool, 32);
  const db = fromPg(pool);
  await jobs.migrate();
  for (const items of chunks(n, 5_000, (i) => ({ job: "noop" as const, payload: payloadOf(i) }))) await jobs.enqueueMany(items);
  await pool.query("VACUUM (ANALYZE)");
  await pool.query(`ALTER TABLE ${jobs.tables.queue} SET (autovacuum_enabled = false)`);
  const measure = async (after?: DispatchPosition) => {
    const step = buildStep(jobs.tables, { claim: { limit: 32, owner: crypto.randomUUID(), leaseMs: 60_000, after } })!;
    const times: number[] = [];
    let read = 0;
    for (let k = 0; k < 9; k++) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode; "Execution Time": number }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${step.text}`, step.values);
        times.push(rows[0]!["QUERY PLAN"][0]!["Execution Time"]);
        read = pages(rows[0]!["QUERY PLAN"][0]!.Plan, `${jobs.tables.queue}_dispatch_idx`);
      } finally {
        await client.query("ROLLBACK");
        client.release();
      }
    }
    return `${times.sort((a, b) => a - b)[4]!.toFixed(3)} ms, ${read} index pages`;
  };
  let at: DispatchPosition | undefined;
  let done = 0;
  for (const mark of marks) {
    for (; done < mark; done += 500) at = (await runStep(db, jobs.tables, { claim: { limit: 500, owner: crypto.randomUUID(), leaseMs: 600_000, after: at } })).dispatchedTo ?? at;
    console.log(`${done.toLocaleString("en-US").padStart(8)} claimed since the vacuum: from the head ${await measure()}; resuming ${await measure(at)}`);
  }
  await pool.end();
} finally {
  await server.stop();
}
