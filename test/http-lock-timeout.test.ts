// A statement that gives up on a lock another session holds (lock_timeout, SQLSTATE 55P03) changed
// nothing: the API answers 503 unavailable, as for a database out of reach, not 500 internal.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { defineJob } from "../src/index.js";
import { API_TOKENS, caller } from "./http-support.js";
import { harness } from "./support/harness.js";

const h = await harness("http_lock_timeout");
const job = defineJob({ name: "job", schema: z.object({}), handler: () => {} });

describe("lock_timeout over HTTP", () => {
  it("cancelling a job whose row another session holds answers 503 unavailable, and leaves the job", async () => {
    const impatient = new pg.Pool({ connectionString: h.url, options: "-c lock_timeout=200" });
    impatient.on("error", () => {});
    const jobs = h.make([job], {}, impatient);
    const call = caller(createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS } }));
    const { id } = await jobs.enqueue("job", {}, { delayMs: 60_000 });
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM jobs_queue WHERE id = $1 FOR UPDATE", [id]);
      const r = await call("DELETE", `/api/jobs/${id}`);
      expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 503, code: "unavailable" });
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect(await h.rows("SELECT count(*)::int AS n FROM jobs_queue WHERE id = $1", [id])).toEqual([{ n: 1 }]);
    await impatient.end();
  });
});
