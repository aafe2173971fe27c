import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXAMPLE_SETUP_SQL, exampleJobs } from "../functions/jobs.js";
import { DEADLINE_ERROR } from "../src/store/requeue.js";
import { harness } from "./support/harness.js";
import { startWorker, type RunningWorker } from "./support/miniflare.js";
import { startWsProxy, type WsProxy } from "./support/ws-proxy.js";

const h = await harness("deploy_adapters");
await h.db.query(EXAMPLE_SETUP_SQL);
const jobs = h.make(exampleJobs(h.db));

let proxy: WsProxy;
let worker: RunningWorker;
beforeAll(async () => {
  proxy = await startWsProxy();
  worker = await startWorker({
    DATABASE_URL: h.url,
    NEON_LOCAL_WSPROXY: `127.0.0.1:${proxy.port}`,
    JOBS_PLATFORM_LIMIT: "3s",
    JOBS_SAFETY_MARGIN: "1s",
  });
}, 120_000);
afterAll(async () => {
  await worker?.dispose();
  await proxy?.close();
});

describe("Cloudflare worker in Miniflare", () => {
  it("scheduled runs a job, retries then dead-letters a failing one, and requeues one over budget", async () => {
    const ok = await jobs.enqueue("example.record", { note: "from the cron" });
    const bad = await jobs.enqueue("example.fail", { reason: "boom" });
    const slow = await jobs.enqueue("example.sleep", { ms: 60_000 });
    await worker.scheduled();
    expect(await h.rows("SELECT job_id::text, note, attempt FROM example_events")).toEqual([{ job_id: ok.id, note: "from the cron", attempt: 1 }]);
    // The failure is retried (attempt 1 recorded), the sleeper is back in the queue before scheduled() resolved.
    expect(await h.rows("SELECT id::text, status, attempt, last_error FROM jobs_queue ORDER BY job_name")).toEqual([
      { id: bad.id, status: "queued", attempt: 1, last_error: "boom" },
      { id: slow.id, status: "queued", attempt: 1, last_error: DEADLINE_ERROR },
    ]);
    await worker.scheduled();
    expect(await h.rows("SELECT id::text, attempts, reason, last_error FROM jobs_dead_letters")).toEqual([
      { id: bad.id, attempts: 2, reason: "exhausted", last_error: "boom" },
    ]);
    expect(await h.rows("SELECT id::text, status, attempt FROM jobs_queue")).toEqual([{ id: slow.id, status: "queued", attempt: 2 }]);
    expect(await h.rows("SELECT count(*)::int AS n FROM example_events")).toEqual([{ n: 1 }]);
  });
});
