// A tick in its own process, for the kill test: its handlers announce themselves
// on stdout and then hang until the parent kills the process with SIGKILL.
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, silentLogger } from "../../src/index.js";

const [url, prefix] = process.argv.slice(2) as [string, string];
const hang = defineJob({
  name: "hang",
  schema: z.object({ label: z.string() }),
  handler: (payload, ctx) => {
    process.stdout.write(`started ${payload.label} ${ctx.jobId}\n`);
    return new Promise(() => {});
  },
});
const pool = new pg.Pool({ connectionString: url, max: 2 });
const jobs = createJobs({
  db: pool,
  jobs: [hang],
  logger: silentLogger,
  // A lease of about 6 s (budget + margin), so the parent can look at the held jobs well before it expires.
  settings: { tablePrefix: prefix, leaseMs: 500, leaseMarginMs: 4_000 },
});
await jobs.tick({ budgetMs: 2_000, claimCutoffMs: 100 });
