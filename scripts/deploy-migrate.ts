// Run before each deploy: `DATABASE_URL=postgres://... npm run migrate:deploy`.
// Applies the library's migrations (safe to run from many places at once, a no-op
// when up to date), then the deployment's own setup from functions/jobs.ts.
import pg from "pg";
import { deploymentJobs, setupDeployment } from "../functions/jobs.js";
import { fromPg, settingsFromEnv } from "../src/index.js";
import { databaseUrl } from "../src/platform/connection.js";

const pool = new pg.Pool({ connectionString: databaseUrl(process.env), max: 1 });
try {
  const db = fromPg(pool);
  const jobs = deploymentJobs(db, settingsFromEnv(process.env));
  const applied = await jobs.migrate();
  await setupDeployment(db);
  console.log(applied.length > 0 ? `applied migrations ${applied.join(", ")}` : "migrations up to date");
} finally {
  await pool.end();
}
