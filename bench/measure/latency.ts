// Enqueue → handler start, in the local dev shape: the HTTP app on a real
// socket, and a tick started either by the low-latency kick (the enqueue
// route's onEnqueued hook runs a coalesced tick, as the platform entrypoints
// do through src/platform/kick.ts) or, with the kick off, only by a cron.
import { serve } from "@hono/node-server";
import pg from "pg";
import { z } from "zod";
import { createApp } from "../../src/http/api-app.js";
import { createJobs, defineJob, fromPg, silentLogger } from "../../src/index.js";
import { KICK_BUDGET_MS } from "../../src/platform/budget.js";
import { coalesced } from "../../src/platform/kick.js";
import { percentile, round } from "../stats.js";
import type { Latency } from "../report.js";

const TOKEN = "bench-token-0123456789abcdef0123456789";

export interface LatencyPlan {
  /** Enqueues measured with the kick on. */
  readonly kicked: number;
  /** Enqueues measured with the kick off, and the cron period used then (the platform's is 60 s). */
  readonly cron: number;
  readonly cronPeriodMs: number;
}

export const measureLatency = async (url: string, plan: LatencyPlan): Promise<{ kickOn: Latency; kickOff: Latency }> => {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => {});
  // Each job carries the moment its enqueue was sent; the handler reports how long ago that was.
  const started = new Map<number, (ms: number) => void>();
  const probe = defineJob({
    name: "probe",
    schema: z.object({ k: z.number() }),
    handler: (p) => started.get(p.k)?.(performance.now()),
  });
  const jobs = createJobs({ db: fromPg(pool), jobs: [probe], logger: silentLogger });
  await jobs.migrate();
  let kickOn = true;
  const kick = coalesced(() => jobs.tick({ budgetMs: KICK_BUDGET_MS }));
  const app = createApp({
    jobs,
    env: { JOBS_API_TOKEN: TOKEN },
    // As the platform entry points do: wake a running tick with room, else kick one. Not awaited:
    // the response goes out while the kicked tick runs (waitUntil on Vercel).
    onEnqueued: ({ dueNow }) => void (kickOn && dueNow && !jobs.wake() && kick()),
  });
  const { server, port } = await new Promise<{ server: ReturnType<typeof serve>; port: number }>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve({ server: s, port: info.port }));
  });
  let key = 0;
  const once = async (): Promise<number> => {
    const k = key++;
    const handlerStarted = new Promise<number>((resolve) => started.set(k, resolve));
    const sent = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/api/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ job: "probe", payload: { k } }),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`enqueue answered ${response.status}`);
    const at = await handlerStarted;
    started.delete(k);
    return at - sent;
  };
  const summary = (xs: number[]): Latency => ({
    p50Ms: round(percentile(xs, 50), 2),
    p95Ms: round(percentile(xs, 95), 2),
    p99Ms: round(percentile(xs, 99), 2),
    samples: xs.length,
  });
  try {
    for (let i = 0; i < 20; i++) await once(); // warm connections and plans
    await kick(); // let the last kicked tick finish
    const on: number[] = [];
    for (let i = 0; i < plan.kicked; i++) on.push(await once());
    await kick();

    // Kick off: a cron ticks every period; enqueues land at random moments of it.
    kickOn = false;
    let cronRunning = true;
    const cron = (async () => {
      while (cronRunning) {
        await jobs.tick({ budgetMs: KICK_BUDGET_MS });
        await new Promise((r) => setTimeout(r, plan.cronPeriodMs));
      }
    })();
    const off: number[] = [];
    for (let i = 0; i < plan.cron; i++) {
      await new Promise((r) => setTimeout(r, Math.random() * plan.cronPeriodMs));
      off.push(await once());
    }
    cronRunning = false;
    await cron;
    return { kickOn: summary(on), kickOff: summary(off) };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await pool.end();
  }
};
