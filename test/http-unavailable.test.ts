// The database out of reach (down, refusing connections, not accepting them, the connection cut) is a
// 503 unavailable that a client may try again, logged as one line: it was a 500 internal with a
// stack per request, and the typed client's wait gave up at once.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient } from "../src/client/index.js";
import { createApp } from "../src/http/index.js";
import { createJobs, defineJob, memoryLogger } from "../src/index.js";
import { API_TOKENS, caller, CRON_SECRET, NEW_TOKEN } from "./http-support.js";
import { expectError } from "./support/http-fixture.js";
import { freshDatabase } from "./support/db.js";
import { freePort } from "./support/postgres.js";

const job = defineJob({ name: "ok", schema: z.object({}), handler: () => {} });
const routes: Array<[string, string, { json?: unknown; token?: string }?]> = [
  ["GET", "/api/jobs"],
  ["POST", "/api/jobs", { json: { job: "ok", payload: {} } }],
  ["GET", "/api/stats"],
  ["GET", "/api/runs"],
  ["GET", "/api/dead-letters"],
  ["POST", "/api/tick", { token: CRON_SECRET }],
];

const appOn = (pool: pg.Pool) => {
  pool.on("error", () => {});
  const logger = memoryLogger();
  const jobs = createJobs({ db: pool, jobs: [job], logger });
  return { app: createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET }, logger }), logger };
};

describe("a database out of reach", () => {
  it("answers 503 unavailable on every route when nothing listens, logging one line each without a stack", async () => {
    const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/none`, max: 2 });
    const { app, logger } = appOn(pool);
    const call = caller(app);
    for (const [method, path, options] of routes) expectError(await call(method, path, options), 503, "unavailable");
    const lines = logger.entries.filter((e) => e.msg.startsWith("http request failed"));
    expect(lines.length).toBe(routes.length);
    expect(lines.every((e) => e.level === "warn" && e.msg === "http request failed: the database is unavailable")).toBe(true);
    for (const line of lines) expect(JSON.stringify(line)).not.toMatch(/\n\s+at /);
    await pool.end();
  });

  it("answers 503 while the database accepts no connections, and the typed client's wait rides it out", async () => {
    const database = await freshDatabase("http_unavailable");
    const admin = new pg.Client({ connectionString: database.url.replace(/\/[^/]+$/, "/postgres") });
    await admin.connect();
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    const { app } = appOn(pool);
    const jobs = createJobs({ db: pool, jobs: [job], logger: memoryLogger() });
    await jobs.migrate();
    const { id } = await jobs.enqueue("ok", {});
    const name = new URL(database.url).pathname.slice(1);
    try {
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
      expectError(await caller(app)("GET", "/api/jobs"), 503, "unavailable");
      // The client polls through the outage and returns once a tick ran the job.
      const client = createClient({ baseUrl: "http://api.test", token: NEW_TOKEN, fetch: async (req) => app.fetch(req) });
      const waiting = client.waitForResult(id, { timeoutMs: 20_000, intervalMs: 50 });
      await new Promise((r) => setTimeout(r, 600));
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      await jobs.tick({ budgetMs: 5_000 });
      // Its handler returned nothing: the output is null.
      expect(await waiting).toBeNull();
    } finally {
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`).catch(() => {});
      await admin.end();
      await pool.end();
      await database.drop();
    }
  });
});
