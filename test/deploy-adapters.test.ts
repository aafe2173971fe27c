// One suite, two platforms: the Vercel functions (served over real HTTP in Node, as
// Vercel's front end would) and the Cloudflare worker (the wrangler bundle in
// Miniflare) pass the same checks against the real PostgreSQL.
import { readFileSync } from "node:fs";
import { neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import ws from "ws";
import { jobs as exampleJobs, setup } from "../functions/jobs.js";
import { DEADLINE_ERROR } from "../src/store/tick/requeue.js";
import { type Harness, harness, sleep } from "./support/harness.js";
import { startWorker, workerBuild } from "./support/miniflare.js";
import { type Served, serveFetch, startNeonHttp } from "./support/neon-http.js";
import { startWsProxy, type WsProxy } from "./support/ws-proxy.js";

const TOKEN = "test-api-token";
const SECRET = "test-cron-secret";

/** A deployment as its users reach it: HTTP in, the platform's cron, its database. */
interface Deployment {
  request(path: string, init?: RequestInit): Promise<Response>;
  /** Fires the platform's minute cron and resolves when that tick is over. */
  cron(): Promise<void>;
  /** Resolves when work kept alive past responses (waitUntil) is done. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

interface Options {
  readonly kick: boolean;
  /** How request handlers reach Neon: `neon()` over HTTP, or a Pool opened and closed per request. */
  readonly transport: "http" | "ws";
  /** More settings for this deployment. */
  readonly extra?: Record<string, string>;
}

type Platform = (h: Harness, options: Options) => Promise<Deployment>;

// The Edge runtime has a global WebSocket; Node 20 does not.
neonConfig.webSocketConstructor = ws;

let neonHttp: Awaited<ReturnType<typeof startNeonHttp>>;
let proxy: WsProxy;
beforeAll(async () => {
  neonHttp = await startNeonHttp();
  proxy = await startWsProxy();
});
afterAll(async () => {
  await neonHttp?.close();
  await proxy?.close();
});

const deploymentEnv = (h: Harness, { kick, transport, extra }: Options): Record<string, string> => ({
  DATABASE_URL: h.url,
  NEON_LOCAL_HTTP: neonHttp.endpoint,
  NEON_LOCAL_WSPROXY: `127.0.0.1:${proxy.port}`,
  JOBS_API_TOKEN: TOKEN,
  CRON_SECRET: SECRET,
  // A 2 s budget, so a job that outlives it is cut short quickly.
  JOBS_PLATFORM_LIMIT: "3s",
  JOBS_SAFETY_MARGIN: "1s",
  JOBS_KICK: kick ? "on" : "off",
  JOBS_NEON_TRANSPORT: transport,
  ...extra,
});

// Vercel's runtime hands `waitUntil` to @vercel/functions through this global; here it collects the promises.
const pendingWork = new Set<Promise<unknown>>();
(globalThis as Record<symbol, unknown>)[Symbol.for("@vercel/request-context")] = {
  get: () => ({
    waitUntil: (p: Promise<unknown>) => {
      const tracked: Promise<unknown> = p.finally(() => pendingWork.delete(tracked));
      pendingWork.add(tracked);
    },
  }),
};

const vercel: Platform = async (h, options) => {
  // The functions read process.env; what this sets is put back when the deployment closes.
  const saved = { ...process.env };
  Object.assign(process.env, deploymentEnv(h, options));
  vi.resetModules();
  // The modules api/ re-exports, loaded fresh so they read this environment.
  const tick = await import("../functions/vercel/tick.js");
  const api = (await import("../functions/vercel/api.js")).default;
  // vercel.json's routing: /api/tick is its own function, everything else rewrites to /api.
  const served: Served = await serveFetch((request) => {
    if (new URL(request.url).pathname === "/api/tick") return request.method === "POST" ? tick.POST(request) : tick.GET(request);
    return api(request);
  });
  // The kick's target comes from the environment (on Vercel: VERCEL_URL), never from a request's Host.
  process.env.JOBS_KICK_URL = new URL("/api/tick", served.origin).toString();
  const request = (path: string, init?: RequestInit) => fetch(new URL(path, served.origin), init);
  return {
    request,
    async cron() {
      // What Vercel Cron sends.
      const response = await request("/api/tick", { headers: { authorization: `Bearer ${SECRET}` } });
      expect(response.status).toBe(200);
    },
    async settle() {
      while (pendingWork.size > 0) await Promise.allSettled([...pendingWork]);
    },
    async close() {
      await served.close();
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    },
  };
};

const cloudflare: Platform = async (h, options) => {
  const worker = await startWorker(deploymentEnv(h, options));
  return {
    request: (path, init) => worker.fetch(path, init),
    cron: () => worker.scheduled(),
    async settle() {
      // Miniflare does not expose fetch's waitUntil: wait until nothing runs, no tick holds a slot,
      // and no tick has started or finished for a while (three quiet looks in a row).
      let quiet = 0;
      let last: string | null = null;
      while (quiet < 3) {
        const [row] = await h.rows<{ busy: number; latest: string | null }>(
          `SELECT (SELECT count(*)::int FROM jobs_queue WHERE status = 'running')
                + (SELECT count(*)::int FROM jobs_ticks WHERE expires_at > now() AND NOT reserved) AS busy,
                  (SELECT max(greatest(started_at, finished_at))::text FROM jobs_ticks) AS latest`,
        );
        quiet = row!.busy === 0 && row!.latest === last ? quiet + 1 : 0;
        last = row!.latest;
        await sleep(100);
      }
    },
    close: () => worker.dispose(),
  };
};

const latencies: Record<string, number[]> = {};

const adapterSuite = (name: string, platform: Platform) => {
  describe(`${name}: the shared adapter suite`, async () => {
    const h = await harness(`deploy_${name}`);
    await setup(h.db);
    const lib = h.make(exampleJobs);
    let d: Deployment;
    beforeAll(async () => {
      d = await platform(h, { kick: true, transport: "http" });
    }, 120_000);
    afterAll(async () => {
      await d?.settle();
      await d?.close();
    });
    const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const queued = () => h.rows("SELECT job_name, status FROM jobs_queue ORDER BY created_at");

    it("answers /api/health without a token", async () => {
      const response = await d.request("/api/health");
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ ok: true });
    });

    it("refuses an enqueue without the API token and writes nothing", async () => {
      const response = await d.request("/api/jobs", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ job: "example.record", payload: { note: "x" } }) });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
      expect(await queued()).toEqual([]);
    });

    it("refuses a payload that does not match the job's schema with 422 and writes nothing", async () => {
      const response = await d.request("/api/jobs", { method: "POST", headers: auth, body: JSON.stringify({ job: "example.record", payload: { note: 42 } }) });
      expect(response.status).toBe(422);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_payload");
      expect(await queued()).toEqual([]);
    });

    it("refuses /api/tick without CRON_SECRET, and an API token is not enough", async () => {
      expect((await d.request("/api/tick")).status).toBe(401);
      expect((await d.request("/api/tick", { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
    });

    it("the cron tick runs a job, retries then dead-letters a failing one, and requeues one over budget before it ends", async () => {
      const ok = await lib.enqueue("example.record", { note: "from the cron" });
      const bad = await lib.enqueue("example.fail", { reason: "boom" });
      const slow = await lib.enqueue("example.sleep", { ms: 60_000 });
      await d.cron();
      expect(await h.rows("SELECT job_id::text, note, attempt FROM example_events")).toEqual([{ job_id: ok.id, note: "from the cron", attempt: 1 }]);
      // Back in the queue before the tick returned, its attempt counted.
      expect(await h.rows("SELECT status, attempt, last_error FROM jobs_queue WHERE id = $1", [slow.id])).toEqual([
        { status: "queued", attempt: 1, last_error: DEADLINE_ERROR },
      ]);
      // The failure's retry (due 10 ms later) runs in this tick or the next, whichever claims it first.
      await d.cron();
      expect(await h.rows("SELECT id::text, attempts, reason, last_error FROM jobs_dead_letters")).toEqual([
        { id: bad.id, attempts: 2, reason: "exhausted", last_error: "boom" },
      ]);
      expect(await h.rows("SELECT sum(retried)::int AS retried, sum(dead_lettered)::int AS dead FROM jobs_metrics WHERE job_name = 'example.fail'")).toEqual([
        { retried: 1, dead: 1 },
      ]);
      expect(await h.rows("SELECT id::text, status, attempt FROM jobs_queue")).toEqual([{ id: slow.id, status: "queued", attempt: 2 }]);
      // What a deployment check sees: the health endpoint reports the cron's last tick.
      const health = (await (await d.request("/api/health")).json()) as { ok: boolean; lastTickAt: string | null };
      expect(health.ok).toBe(true);
      expect(Date.parse(health.lastTickAt ?? "")).toBeGreaterThan(Date.now() - 60_000);
      await h.db.query("DELETE FROM jobs_queue");
    });

    it("an enqueue of a job due now starts it without waiting for the cron (the kick)", async () => {
      for (let i = 0; i < 5; i++) {
        const sent = Date.now();
        const response = await d.request("/api/jobs", { method: "POST", headers: auth, body: JSON.stringify({ job: "example.record", payload: { note: `kick ${i}` } }) });
        expect(response.status).toBe(201);
        const { id } = (await response.json()) as { id: string };
        let started: Date | undefined;
        while (!started) {
          const [row] = await h.rows<{ at: Date }>("SELECT at FROM example_events WHERE job_id = $1", [id]);
          started = row?.at;
          if (!started) await sleep(10);
        }
        (latencies[name] ??= []).push(started.getTime() - sent);
        await d.settle();
      }
      expect(await h.rows("SELECT note FROM example_events WHERE note LIKE 'kick%' ORDER BY at")).toEqual([0, 1, 2, 3, 4].map((i) => ({ note: `kick ${i}` })));
    });
  });

  describe(`${name}: with JOBS_KICK=off and a Neon Pool per request`, async () => {
    const h = await harness(`deploy_${name}_nokick`);
    await setup(h.db);
    let d: Deployment;
    beforeAll(async () => {
      d = await platform(h, { kick: false, transport: "ws" });
    }, 120_000);
    afterAll(async () => {
      await d?.close();
    });

    it("an enqueued job waits for the cron tick", async () => {
      const response = await d.request("/api/jobs", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ job: "example.record", payload: { note: "waits" } }),
      });
      expect(response.status).toBe(201);
      await d.settle();
      // The request's Pool was closed before its response: no connection of the Neon driver is left.
      const neonConnections = () =>
        h.rows<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '%neondatabase%'");
      for (let i = 0; (await neonConnections())[0]!.n > 0; i++) {
        if (i === 100) throw new Error("the request left a Neon connection open");
        await sleep(20);
      }
      await sleep(500);
      expect(await h.rows("SELECT job_name, status, attempt FROM jobs_queue")).toEqual([{ job_name: "example.record", status: "queued", attempt: 0 }]);
      await d.cron();
      expect(await h.rows("SELECT note FROM example_events")).toEqual([{ note: "waits" }]);
      expect(await h.rows("SELECT * FROM jobs_queue")).toEqual([]);
    });
  });
};

/**
 * Fan-out and continuation through the platform's own invocation path: one cron delivery drains a
 * backlog larger than one tick can take in its budget, with more than one tick at once (each a
 * separate invocation), never more than JOBS_MAX_TICKS, and the deployment is idle afterwards.
 */
const fleetSuite = (name: string, platform: Platform) => {
  describe(`${name}: fan-out and continuation`, async () => {
    const h = await harness(`deploy_${name}_fleet`);
    await setup(h.db);
    const lib = h.make(exampleJobs);
    let d: Deployment;
    beforeAll(async () => {
      d = await platform(h, { kick: false, transport: "http", extra: { JOBS_MAX_TICKS: "4", JOBS_CONCURRENCY: "5" } });
    }, 120_000);
    afterAll(async () => {
      await d?.settle();
      await d?.close();
    });

    it("one cron delivery drains a backlog through several overlapping tick invocations, at most JOBS_MAX_TICKS at once, then goes idle", async () => {
      // 300 jobs of 200 ms at concurrency 5: one tick's 1 s of claiming takes ~25, so the drain needs
      // several ticks at once (fan-out) and ticks after the first ones' budgets (continuation).
      await lib.enqueueMany(Array.from({ length: 300 }, () => ({ job: "example.sleep" as const, payload: { ms: 200 } })));
      const invocations = new Set<string>();
      let peak = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const rows = await h.rows<{ slot: number; started: string }>(
            `SELECT slot, started_at::text AS started FROM jobs_ticks WHERE expires_at > now() AND NOT reserved`);
          peak = Math.max(peak, rows.length);
          for (const r of rows) invocations.add(`${r.slot} ${r.started}`);
          await sleep(20);
        }
      })();
      const started = Date.now();
      await d.cron();
      await expect.poll(async () => (await h.rows<{ n: number }>("SELECT count(*)::int AS n FROM jobs_queue"))[0]!.n, { timeout: 60_000, interval: 100 }).toBe(0);
      const drained = Date.now() - started;
      await d.settle();
      sampling = false;
      await sampler;
      console.log(`${name}: drained 300 jobs of 200 ms in ${drained} ms with one cron delivery; ${invocations.size} tick invocations, at most ${peak} at once`);
      expect(peak).toBeGreaterThan(1);
      expect(peak).toBeLessThanOrEqual(4);
      // More invocations than slots: ticks handed their slots on when their budgets ran out.
      expect(invocations.size).toBeGreaterThan(4);
      const [done] = await h.rows<{ ok: number; runs: number }>(
        "SELECT coalesce(sum(succeeded), 0)::int AS ok, coalesce(sum(succeeded + failed), 0)::int AS runs FROM jobs_metrics WHERE job_name = 'example.sleep'");
      expect(done).toEqual({ ok: 300, runs: 300 });
      // Idle again soon: no tick holds or has reserved a slot (a last continuation may still be finding nothing to do).
      await expect.poll(() => h.rows("SELECT slot FROM jobs_ticks WHERE expires_at > now()"), { timeout: 10_000, interval: 100 }).toEqual([]);
    }, 90_000);
  });
};

describe("the worker bundle", () => {
  it("is what wrangler uploads, and stays under the 150,000-byte gzip goal (the README gives the measured size)", async () => {
    const build = await workerBuild();
    console.log(`worker bundle: ${build.bytes} bytes, gzip ${build.gzipBytes} bytes`);
    expect(build.gzipBytes).toBeLessThan(150_000);
    // Migrations run from Node before a deploy: their SQL is not shipped in the Worker.
    const code = readFileSync(build.scriptPath, "utf8");
    expect(code).not.toContain("CREATE TABLE {{prefix}}queue");
    expect(code).toContain("migrations do not run inside a Cloudflare Worker");
  });
});

adapterSuite("vercel", vercel);
adapterSuite("cloudflare", cloudflare);
fleetSuite("vercel", vercel);
fleetSuite("cloudflare", cloudflare);

afterAll(() => {
  // The benchmark of record is the README's; this prints what this run saw.
  for (const [name, ms] of Object.entries(latencies)) console.log(`enqueue-to-start with the kick, ${name}: ${ms.join(", ")} ms`);
});
