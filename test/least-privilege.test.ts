// A deployment whose database role may use some tables and not others (grants made at install time do
// not cover a table a later migration adds): the API and the dashboard say the server is misconfigured,
// not that the database is down.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { createJobs, defineJob, silentLogger } from "../src/index.js";
import { PASSWORD } from "./support/browser.js";
import { harness } from "./support/harness.js";

const h = await harness("least_priv");
const role = `pgtick_leastpriv_${process.pid}`;
const owner = h.make([]);
await owner.migrate();
await h.db.query(`DROP ROLE IF EXISTS ${role}`);
await h.db.query(`CREATE ROLE ${role} NOLOGIN`);
await h.db.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
await h.db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
// As after an upgrade whose migration added this table: the role was never granted it.
await h.db.query(`REVOKE ALL ON jobs_dashboard_logouts, jobs_runs FROM ${role}`);
const url = new URL(h.url);
url.searchParams.set("options", `-c role=${role}`);
const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
afterAll(async () => {
  await pool.end();
  await h.db.query(`DROP OWNED BY ${role}`);
  await h.db.query(`DROP ROLE ${role}`);
});

const note = defineJob({ name: "note", schema: z.object({}), handler: () => {} });
const jobs = createJobs({ db: pool, jobs: [note], logger: silentLogger });
const env = { DASHBOARD_PASSWORD: PASSWORD, JOBS_API_TOKEN: "api-token-for-tests-0123456789abcdef" };
const app = createApp({ jobs, env, logger: silentLogger });

describe("a database role refused a table", () => {
  it("is a misconfigured server on the API (500 internal, saying so) and on the dashboard (its own page), never 'did not answer'", async () => {
    const runs = await app.request("http://x/api/runs", { headers: { authorization: `Bearer ${env.JOBS_API_TOKEN}` } });
    expect(runs.status).toBe(500);
    expect(await runs.json()).toMatchObject({ error: { code: "internal", message: expect.stringContaining("misconfigured") } });
    const login = await app.request("http://x/dashboard/login", {
      method: "POST", headers: { origin: "http://x", "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ password: PASSWORD }),
    });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await app.request("http://x/dashboard/jobs", { headers: { cookie } });
    expect(page.status).toBe(500);
    const text = await page.text();
    expect(text).toContain("misconfigured");
    expect(text).not.toContain("did not answer");
  });
});
