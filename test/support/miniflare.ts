// Runs the worker bundle that `wrangler deploy` would upload inside Miniflare
// (workerd, the Workers runtime), reaching the test PostgreSQL through the
// WebSocket proxy (Neon Pool) and the SQL-over-HTTP endpoint (neon()).
import { Miniflare } from "miniflare";
import { buildWorker, type WorkerBuild } from "../../scripts/build-worker.js";

let built: Promise<WorkerBuild> | undefined;

/** Builds the worker once per test file that asks (only test/deploy-adapters-cloudflare.test.ts does: the build goes to one fixed folder). */
export const workerBuild = (): Promise<WorkerBuild> => (built ??= buildWorker());

export interface RunningWorker {
  readonly mf: Miniflare;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Fires the Cron Trigger and resolves once every `ctx.waitUntil` promise has settled. */
  scheduled(cron?: string): Promise<void>;
  dispose(): Promise<void>;
}

export const startWorker = async (bindings: Record<string, string>): Promise<RunningWorker> => {
  const { scriptPath } = await workerBuild();
  const mf = new Miniflare({
    // As wrangler.toml names it, so its SELF service binding reaches this same worker.
    name: "pgtick",
    serviceBindings: { SELF: "pgtick" },
    modules: true,
    scriptPath,
    compatibilityDate: "2026-04-01",
    compatibilityFlags: ["nodejs_compat"],
    bindings,
  });
  await mf.ready;
  return {
    mf,
    // Miniflare's fetch takes undici's RequestInit; the standard one is what tests write.
    fetch: (path, init) => mf.dispatchFetch(new URL(path, "http://worker.test").toString(), init as never) as unknown as Promise<Response>,
    async scheduled(cron = "* * * * *") {
      // Typed as a Fetcher without @cloudflare/workers-types; `scheduled` is there at run time.
      const worker = (await mf.getWorker()) as unknown as { scheduled(event: { cron: string }): Promise<unknown> };
      await worker.scheduled({ cron });
    },
    dispose: () => mf.dispose(),
  };
};
