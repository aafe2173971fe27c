// The dev server seeds fresh tables from the jobs module's seed(): one that fails says so, and runs again
// at the next start (it was never run again: the tables were no longer fresh).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { startDevServer } from "../src/dev/server.js";
import { freshDatabase } from "./support/db.js";
import { freePort } from "./support/postgres.js";

const database = await freshDatabase("dev_seed");
const dir = mkdtempSync(join(tmpdir(), "pgtick-dev-seed-"));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await database.drop();
});

it("says a failed seed is the jobs module's, and seeds at the next start once it works", async () => {
  const lines: string[] = [];
  const start = async () =>
    startDevServer({
      env: { DATABASE_URL: database.url, DEV_DIR: dir, PORT: String(await freePort()), JOBS_MODULE: "test/fixtures/seed-fails-once.jobs.ts", JOBS_KICK: "off" },
      cwd: process.cwd(),
      out: (line) => void lines.push(line),
    });
  (globalThis as { seedFails?: boolean }).seedFails = true;
  await expect(start()).rejects.toThrow("the jobs module's seed(jobs) failed (it runs again at the next start): the example API is down");
  (globalThis as { seedFails?: boolean }).seedFails = false;
  const server = await start();
  try {
    expect(lines.join("\n")).toContain("example jobs enqueued");
    // The banner's curl to try enqueues a job this module has (it named the example's send-welcome, whatever the module).
    expect(lines.join("\n")).toContain(`-d '{"job":"seeded","payload":{}}'   # with its payload`);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    expect((await client.query("SELECT job_name FROM jobs_queue")).rows).toEqual([{ job_name: "seeded" }]);
    await client.end();
  } finally {
    await server.stop();
  }
  // Seeded once: a third start seeds nothing more.
  lines.length = 0;
  const third = await start();
  await third.stop();
  expect(lines.join("\n")).not.toContain("example jobs enqueued");
}, 60_000);
