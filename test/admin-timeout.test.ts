// Admin statements are bounded as the tick's are: a database that stalls (a table locked for minutes) gives
// an API request a 503 and a dashboard page its "did not answer" page at the bound, not a hang.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { ADMIN_STATEMENT_MS } from "../src/admin/admin.js";
import { createApp } from "../src/http/index.js";
import { harness } from "./support/harness.js";

const h = await harness("admin_timeout");

describe("an admin read while the database stalls", () => {
  it("is given up at its bound, an enqueue too: the library rejects, the API answers 503 unavailable", async () => {
    const jobs = await h.isolated([defineJob({ name: "note", schema: z.object({}), handler: () => {} })]);
    const token = "admin-timeout-token-0123456789";
    const app = createApp({ jobs, env: { JOBS_API_TOKEN: token } });
    const locker = await h.main.connect();
    try {
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE ${jobs.tables.deadLetters}, ${jobs.tables.queue} IN ACCESS EXCLUSIVE MODE`);
      const started = Date.now();
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      const [library, api, libraryEnqueue, apiEnqueue] = await Promise.all([
        jobs.deadLetters.list().then(() => "answered", (e: Error) => e.name),
        app.request("http://api.test/api/dead-letters", { headers }),
        // Before, an enqueue waited as long as the lock was held.
        jobs.enqueue("note", {}).then(() => "answered", (e: Error) => e.name),
        app.request("http://api.test/api/jobs", { method: "POST", headers, body: JSON.stringify({ job: "note", payload: {} }) }),
      ]);
      expect(library).toBe("StatementTimeout");
      expect(libraryEnqueue).toBe("StatementTimeout");
      for (const res of [api, apiEnqueue]) {
        expect(res.status).toBe(503);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unavailable");
      }
      // Given up at the bound, not when the lock went.
      expect(Date.now() - started).toBeLessThan(ADMIN_STATEMENT_MS + 5_000);
    } finally {
      await locker.query("ROLLBACK");
      locker.release();
    }
  }, ADMIN_STATEMENT_MS + 20_000);
});
