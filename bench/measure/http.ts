// Single enqueues through the HTTP app (src/http/api-app.ts) over a real local
// socket: autocannon at 32 connections (throughput and latency under load),
// then one request at a time with fetch (the latency of one enqueue on its
// own, timed to the microsecond; autocannon rounds to whole milliseconds).
import { serve } from "@hono/node-server";
import autocannon from "autocannon";
import pg from "pg";
import { createApp } from "../../src/http/api-app.js";
import { percentile, round } from "../stats.js";
import { ourJobs } from "../systems/ours.js";

export interface HttpEnqueueResult {
  /** autocannon, 32 connections. */
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly requests: number;
  /** One request at a time. */
  readonly singleP50Ms: number;
  readonly singleP99Ms: number;
  readonly singleRequests: number;
}

const TOKEN = "bench-token-0123456789abcdef0123456789";

export const measureHttpEnqueue = async (url: string, seconds: number, single: number): Promise<HttpEnqueueResult> => {
  const pool = new pg.Pool({ connectionString: url, max: 16 });
  const { jobs } = ourJobs(pool);
  await jobs.migrate();
  const app = createApp({ jobs, env: { JOBS_API_TOKEN: TOKEN } });
  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve({ server: s, port: info.port }));
  });
  try {
    const endpoint = `http://127.0.0.1:${port}/api/jobs`;
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const body = JSON.stringify({ job: "noop", payload: { i: 1 } });
    const before = await count(pool, jobs.tables.queue);
    const r = await autocannon({ url: endpoint, method: "POST", connections: 32, duration: seconds, headers, body });
    const stored = (await count(pool, jobs.tables.queue)) - before;
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`HTTP enqueue: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    // Every answered request must be a job in the queue (requests cut off by the end of the run are not answered).
    if (stored < r["2xx"]) throw new Error(`HTTP enqueue: ${r["2xx"]} answered 201 but only ${stored} jobs were stored`);

    const times: number[] = [];
    for (let i = 0; i < single + 20; i++) {
      const started = performance.now();
      const response = await fetch(endpoint, { method: "POST", headers, body });
      await response.arrayBuffer();
      if (response.status !== 201) throw new Error(`HTTP enqueue answered ${response.status}`);
      if (i >= 20) times.push(performance.now() - started); // the first requests warm the connection
    }
    return {
      reqPerSec: Math.round(r.requests.average),
      p50Ms: r.latency.p50,
      p99Ms: r.latency.p99,
      requests: r["2xx"],
      singleP50Ms: round(percentile(times, 50), 3),
      singleP99Ms: round(percentile(times, 99), 3),
      singleRequests: times.length,
    };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await pool.end();
  }
};

const count = async (pool: pg.Pool, table: string) => Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n ?? 0);
