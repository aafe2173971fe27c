// The deploy adapter suites' shared setup: a deployment as its users reach it, on either platform.
// The Vercel functions are served over real HTTP in Node, as Vercel's front end would serve them,
// and the Cloudflare worker is the wrangler bundle in Miniflare; both reach the real PostgreSQL
// through the local Neon endpoints.
import { neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, expect, vi } from "vitest";
import ws from "ws";
import { type Harness, sleep } from "./harness.js";
import { startWorker } from "./miniflare.js";
import { type Served, serveFetch, startNeonHttp } from "./neon-http.js";
import { startWsProxy, type WsProxy } from "./ws-proxy.js";

export const TOKEN = "test-api-token-0123456789";
export const SECRET = "test-cron-secret";

/** A deployment as its users reach it: HTTP in, the platform's cron, its database. */
export interface Deployment {
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

export type Platform = (h: Harness, options: Options) => Promise<Deployment>;

// The Edge runtime has a global WebSocket; Node 20 does not.
neonConfig.webSocketConstructor = ws;

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

/**
 * Both platforms, over the local Neon endpoints (SQL over HTTP and the WebSocket proxy) that this
 * registers to start before the file's tests and stop after them.
 */
export const deployments = (): { vercel: Platform; cloudflare: Platform } => {
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

  const vercel: Platform = async (h, options) => {
    // The functions read process.env; what this sets is put back when the deployment closes.
    const saved = { ...process.env };
    Object.assign(process.env, deploymentEnv(h, options));
    vi.resetModules();
    // The modules api/ re-exports, loaded fresh so they read this environment.
    const tick = await import("../../functions/vercel/tick.js");
    const api = (await import("../../functions/vercel/api.js")).default;
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

  return { vercel, cloudflare };
};
