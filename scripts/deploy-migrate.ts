// Run before each deploy: `DATABASE_URL=postgres://... npm run migrate:deploy`.
// Applies the library's migrations (safe to run from many places at once, a no-op
// when up to date), then the deployment's own setup from functions/jobs.ts.
import { deploymentJobs, setupDeployment } from "../functions/jobs.js";
import { settingsFromEnv } from "../src/index.js";
import { pgPool } from "../src/platform/pg.js";

const connection = pgPool(process.env, 1);
try {
  const jobs = deploymentJobs(connection.db, settingsFromEnv(process.env));
  const applied = await jobs.migrate();
  await setupDeployment(connection.db);
  console.log(applied.length > 0 ? `applied migrations ${applied.join(", ")}` : "migrations up to date");
} finally {
  await connection.close();
}
