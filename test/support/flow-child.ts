// One process of the flow-control race: ticks in a loop over jobs with limits, recording each
// start and finish in the database (clock_timestamp) so the parent can check every window.
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, silentLogger } from "../../src/index.js";

const [url, prefix, seconds] = process.argv.slice(2) as [string, string, string];
const pool = new pg.Pool({ connectionString: url, max: 8 });
const payload = z.object({ tenant: z.string(), n: z.number() });
const record = (name: string) => async (p: { tenant: string }, ctx: { jobId: string; attempt: number; signal: AbortSignal; db: { query: (t: string, v: unknown[]) => Promise<{ rows: unknown[] }> } }) => {
  // The run from the handler's start (one clock for all processes of this machine); the start a rate limit
  // counts is the claim, which the claim stamps on the row (updated_at) after the admission's locks. Only
  // while the row is still this attempt's: on a loaded machine the insert can run after the tick requeued
  // the job at its deadline (its updated_at then the requeue's) or another claimed it (that claim's).
  const started = Date.now();
  const { rows } = await ctx.db.query(
    `INSERT INTO flow_runs (job_id, job, tenant, started, claimed)
     SELECT $1, $2, $3, to_timestamp($4::float8 / 1000), q.updated_at FROM ${prefix}queue q WHERE q.id = $1 AND q.attempt = $5 AND q.status = 'running' RETURNING id`,
    [ctx.jobId, name, p.tenant, started, ctx.attempt]);
  // Stops when the tick's deadline aborts it, as a handler should: its run then ends there.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 30 + Math.random() * 40);
    ctx.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
  const id = (rows[0] as { id: number } | undefined)?.id;
  if (id !== undefined) await ctx.db.query(`UPDATE flow_runs SET finished = to_timestamp($2::float8 / 1000) WHERE id = $1`, [id, Date.now()]);
  if (ctx.signal.aborted) throw ctx.signal.reason;
};
// A lease well past the tick's budget: the race checks limits that hold while leases hold. A process
// starved past its lease on a loaded machine lets another tick run its job again (at least once), which
// would read here as one run too many at once.
const jobs = createJobs({
  db: pool,
  logger: silentLogger,
  settings: { tablePrefix: prefix, maxTicks: 5, concurrency: 6, leaseMarginMs: 10_000, claimIntervalMs: 25 },
  jobs: [
    defineJob({ name: "per-tenant", schema: payload, concurrency: { limit: 2, key: (p) => p.tenant }, handler: record("per-tenant") }),
    defineJob({ name: "rated", schema: payload, rateLimit: { limit: 4, periodMs: 500, key: (p) => p.tenant }, handler: record("rated") }),
    defineJob({ name: "mail-a", schema: payload, rateLimit: { limit: 3, periodMs: 400, group: "provider" }, handler: record("mail-a") }),
    defineJob({ name: "mail-b", schema: payload, rateLimit: { limit: 3, periodMs: 400, group: "provider" }, handler: record("mail-b") }),
  ],
});
const until = Date.now() + Number(seconds) * 1_000;
while (Date.now() < until) await jobs.tick({ budgetMs: 1_200, claimCutoffMs: 200 });
await pool.end();
