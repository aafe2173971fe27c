// The library in one file: define jobs, enqueue them, run ticks.
// `npm run example` runs it against DATABASE_URL, or an embedded PostgreSQL when unset.
import pg from "pg";
import { z } from "zod";
import { createJobs, defineJob, PermanentJobError } from "../src/index.js";
import { startEmbeddedPostgres } from "../test/support/postgres.js";

const sendEmail = defineJob({
  name: "send-email",
  schema: z.object({ to: z.email(), subject: z.string() }),
  maxAttempts: 3,
  handler: async ({ to, subject }, ctx) => {
    ctx.log("info", "sending", { to, subject });
  },
});

const chargeCard = defineJob({
  name: "charge-card",
  schema: z.object({ cents: z.number().int().positive() }),
  handler: async ({ cents }) => {
    if (cents > 100_000) throw new PermanentJobError("amount over the limit; retrying will not help");
  },
});

const embedded = process.env.DATABASE_URL ? undefined : await startEmbeddedPostgres();
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? embedded!.url });
// pool.end() resolves before its connections have closed: PostgreSQL, stopped next, may end them first (no failure).
let ending = false;
pool.on("error", (e) => ending || console.error("idle database connection failed:", e.message));
try {
  const jobs = createJobs({ db: pool, jobs: [sendEmail, chargeCard], settings: { tablePrefix: "quickstart_" } });
  await jobs.migrate();

  await jobs.enqueue("send-email", { to: "ada@example.com", subject: "Welcome" }, { idempotencyKey: "welcome-ada" });
  await jobs.enqueue("send-email", { to: "ada@example.com", subject: "Welcome" }, { idempotencyKey: "welcome-ada" }); // deduplicated
  await jobs.enqueue("send-email", { to: "bob@example.com", subject: "Later" }, { delayMs: 60_000 });
  await jobs.enqueue("charge-card", { cents: 250_000 });

  // What a platform cron does every minute:
  const report = await jobs.tick({ budgetMs: 10_000 });
  console.log("tick report:", report);
} finally {
  ending = true;
  await pool.end();
  await embedded?.stop();
}
