// Admin statements are bounded as the tick's are: a database that stalls (a table locked for minutes) gives
// an API request a 503 and a dashboard page its "did not answer" page at the bound, not a hang.
import { describe, expect, it } from "vitest";
import { ADMIN_STATEMENT_MS } from "../src/admin/admin.js";
import { createApp } from "../src/http/index.js";
import { harness } from "./support/harness.js";

const h = await harness("admin_timeout");

describe("an admin read while the database stalls", () => {
  it("is given up at its bound: the library rejects, the API answers 503 unavailable", async () => {
    const jobs = await h.isolated([]);
    const token = "admin-timeout-token-0123456789";
    const app = createApp({ jobs, env: { JOBS_API_TOKEN: token } });
    const locker = await h.main.connect();
    try {
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE ${jobs.tables.deadLetters} IN ACCESS EXCLUSIVE MODE`);
      const started = Date.now();
      const [library, api] = await Promise.all([
        jobs.deadLetters.list().then(() => "answered", (e: Error) => e.name),
        app.request("http://api.test/api/dead-letters", { headers: { authorization: `Bearer ${token}` } }),
      ]);
      expect(library).toBe("StatementTimeout");
      expect(api.status).toBe(503);
      expect(((await api.json()) as { error: { code: string } }).error.code).toBe("unavailable");
      // Given up at the bound, not when the lock went.
      expect(Date.now() - started).toBeLessThan(ADMIN_STATEMENT_MS + 5_000);
    } finally {
      await locker.query("ROLLBACK");
      locker.release();
    }
  }, ADMIN_STATEMENT_MS + 20_000);
});
