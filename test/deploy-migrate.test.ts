// `npm run migrate:deploy`, as the README runs it before each deploy: the CLI's `migrate` with the
// repository's jobs module, so it also makes the module's own tables, and fails in one line.
import { execFile } from "node:child_process";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../scripts/build-worker.js";
import { freshDatabase } from "./support/db.js";
import { emptyFolder, isolatedEnv } from "./support/isolated-env.js";

const database = await freshDatabase("deploy_migrate");
afterAll(() => database.drop());

const migrate = (env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    // No dev server this folder may have running stands in for a missing DATABASE_URL.
    const options = { cwd: ROOT, env: isolatedEnv({ DEV_DIR: emptyFolder("pgtick-migrate-"), ...env }) };
    execFile("npm", ["run", "--silent", "migrate:deploy"], options, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout: stdout.trim(), stderr: stderr.trim() });
    });
  });

describe("npm run migrate:deploy", () => {
  it("creates the library's tables and the deployment's own, and changes nothing the second time", async () => {
    const first = await migrate({ DATABASE_URL: database.url });
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toMatch(/^applied migrations 1, 2, .* \(tables jobs_\*; ran the jobs module's setup\)$/);
    expect((await migrate({ DATABASE_URL: database.url })).stdout).toMatch(/^up to date: migrations 1, 2, .* already applied \(tables jobs_\*; ran the jobs module's setup\)$/);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client.query("SELECT to_regclass('jobs_queue')::text AS queue, to_regclass('example_events')::text AS example");
    await client.end();
    expect(rows).toEqual([{ queue: "jobs_queue", example: "example_events" }]);
  });

  it("says in one line, without a stack, which variable is missing or which database cannot be reached", async () => {
    const unset = await migrate({ DATABASE_URL: "" });
    expect(unset.code).toBe(6);
    expect(unset.stderr).toMatch(/^pgtick: DATABASE_URL is not set/);
    expect(unset.stderr).not.toContain("\n");
    const down = await migrate({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere" });
    expect(down.code).toBe(7);
    expect(down.stderr).toMatch(/^pgtick: cannot connect to the database/);
    expect(down.stderr).not.toContain("\n");
  });
});
