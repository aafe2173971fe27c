// One process of the fleet race: it starts ticks in a loop until the queue is empty (or the given
// seconds pass), with the fleet-wide cap and a handler whose side effects (in the database) let the
// parent count what ran at once.
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, silentLogger } from "../../src/index.js";

const [url, prefix, seconds] = process.argv.slice(2) as [string, string, string];
const pool = new pg.Pool({ connectionString: url, max: 8 });
const work = defineJob({
  name: "fleet-work",
  schema: z.object({ n: z.number() }),
  handler: async (_p, ctx) => {
    await ctx.db.query(`UPDATE fleet_stats SET running = running + 1, peak = greatest(peak, running + 1)`);
    const [{ id }] = (await ctx.db.query<{ id: number }>(`INSERT INTO fleet_runs (job_id, attempt) VALUES ($1, $2) RETURNING id`, [ctx.jobId, ctx.attempt])).rows as [{ id: number }];
    await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
    await ctx.db.query(`UPDATE fleet_runs SET finished = clock_timestamp() WHERE id = $1`, [id]);
    await ctx.db.query(`UPDATE fleet_stats SET running = running - 1`);
  },
});
// A lease well past the tick's budget: the race checks limits that hold while leases hold. A process
// starved past its lease on a loaded machine lets another tick run its job again (at least once), which
// would read here as one run too many at once.
const jobs = createJobs({ db: pool, jobs: [work], logger: silentLogger, settings: { tablePrefix: prefix, maxTicks: 3, concurrency: 4, leaseMarginMs: 10_000 } });
const until = Date.now() + Number(seconds) * 1_000;
let ticks = 0;
let capped = 0;
// Runs a deadline cut short go back to the queue and run again (at least once); counted so the parent can tell.
let requeued = 0;
// Until every job has run: a fixed time would leave jobs queued on a slow server, and end the process
// while a handler a tick let go of at its deadline still had its own writes to make.
const left = async () => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${prefix}queue`)).rows[0]!.n;
while (Date.now() < until && (await left()) > 0) {
  const report = await jobs.tick({ budgetMs: 3_000, claimCutoffMs: 1_500 });
  ticks++;
  requeued += report.requeuedIds.length;
  if (report.capped) capped++;
}
process.stdout.write(`${JSON.stringify({ ticks, capped, requeued })}\n`);
await pool.end();
