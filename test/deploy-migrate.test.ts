import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../scripts/build-worker.js";
import { freshDatabase } from "./support/db.js";

const database = await freshDatabase("deploy_migrate");
afterAll(() => database.drop());

const migrate = async (env: Record<string, string>) => {
  const { stdout } = await promisify(execFile)(join(ROOT, "node_modules", ".bin", "tsx"), ["scripts/deploy-migrate.ts"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });
  return stdout.trim();
};

describe("npm run migrate:deploy", () => {
  it("creates the library's tables and the deployment's own, and changes nothing the second time", async () => {
    expect(await migrate({ DATABASE_URL: database.url })).toMatch(/^applied migrations 1, 2/);
    expect(await migrate({ DATABASE_URL: database.url })).toBe("migrations up to date");
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client.query("SELECT to_regclass('jobs_queue')::text AS queue, to_regclass('example_events')::text AS example");
    await client.end();
    expect(rows).toEqual([{ queue: "jobs_queue", example: "example_events" }]);
  });

  it("says which variable is missing when DATABASE_URL is unset", async () => {
    const error = await migrate({ DATABASE_URL: "" }).catch((e: { stderr: string }) => e.stderr);
    expect(error).toContain("DATABASE_URL is not set");
  });
});
