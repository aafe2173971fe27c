// Bulk enqueue: where the time goes (validation in JS vs the statement), ours only.
// npx tsx bench/profile/enqueue-micro.ts
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, silentLogger } from "../../src/index.js";
import { prepareJob } from "../../src/enqueue-prepare.js";
import { startEmbeddedPostgres } from "../../test/support/postgres.js";

const noop = defineJob({ name: "noop", schema: z.object({ i: z.number() }), handler: () => {} });
const server = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres();
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? server!.url, max: 2 });
pool.on("error", () => {}); // an idle connection cut when the server stops
const jobs = createJobs({ db: pool, jobs: [noop], logger: silentLogger, settings: { tablePrefix: "micro_" } });
await jobs.migrate();
const items = Array.from({ length: 1_000 }, (_, i) => ({ job: "noop" as const, payload: { i } }));
for (let round = 0; round < 3; round++) {
  await pool.query(`TRUNCATE micro_queue`);
  let t = performance.now();
  for (let k = 0; k < 20; k++) for (const item of items) prepareJob(jobs.registry, jobs.settings, item);
  const validate = performance.now() - t;
  t = performance.now();
  for (let k = 0; k < 20; k++) await jobs.enqueueMany(items);
  const total = performance.now() - t;
  console.log(`round ${round}: 20,000 jobs: validation ${validate.toFixed(0)} ms, enqueueMany ${total.toFixed(0)} ms = ${Math.round(20_000 / (total / 1000))} jobs/s`);
}
await pool.end();
await server?.stop();
