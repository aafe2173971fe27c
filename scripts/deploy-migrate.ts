// Run before each deploy: `DATABASE_URL=postgres://... npm run migrate:deploy` (Neon: the direct
// connection string). Applies the library's migrations (safe to run from many places at once, a
// no-op when up to date), then the jobs module's own `setup` (its tables).
import { settingsFromEnv } from "pgtick";
import * as example from "../functions/jobs.js";
import { type JobsModule, jobsFromModule } from "../src/module/jobs-module.js";

const app: JobsModule = example;
import { pgPool } from "../src/platform/pg.js";

const connection = pgPool(process.env, 1);
try {
  const jobs = jobsFromModule(app, { db: connection.db, settings: settingsFromEnv(process.env, app.settings) });
  const applied = await jobs.migrate();
  await app.setup?.(connection.db);
  console.log(applied.length > 0 ? `applied migrations ${applied.join(", ")}` : "migrations up to date");
} finally {
  await connection.close();
}
