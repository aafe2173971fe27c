// The Cloudflare Worker: `fetch` serves the API (and dashboard), `scheduled` runs the minute tick.
import type { Hono } from "hono";
import { deploymentApp } from "../../src/platform/deployment-app.js";
import { kickEnabled, WORKERS_SCHEDULED } from "../../src/platform/budget.js";
import { coalesced } from "../../src/platform/kick.js";
import { neonForRequest, neonPool } from "../../src/platform/neon.js";
import { scheduledTick } from "../../src/platform/scheduled.js";
import { runPlatformTick } from "../../src/platform/invocation.js";
import { stringEnv, type WorkerExecutionContext, type WorkerScheduledController } from "../../src/platform/workers.js";
import { deploymentJobs } from "../jobs.js";

// Bindings are fixed per deployment, so the app is built at the first request.
let app: Hono | undefined;

const build = (bindings: Record<string, unknown>): Hono => {
  const env = stringEnv(bindings);
  // The kick: a short tick in this isolate, kept alive past the response with ctx.waitUntil.
  const kick = coalesced(() => runPlatformTick({ env, platform: WORKERS_SCHEDULED, connect: neonPool, jobs: deploymentJobs }, { kick: true }));
  return deploymentApp({
    env,
    connect: neonForRequest,
    jobs: deploymentJobs,
    platform: () => WORKERS_SCHEDULED,
    onDueNow: kickEnabled(env) ? (c) => c.executionCtx.waitUntil(kick()) : undefined,
  });
};

export default {
  fetch(request: Request, bindings: Record<string, unknown>, ctx: WorkerExecutionContext): Promise<Response> {
    app ??= build(bindings);
    return Promise.resolve(app.fetch(request, bindings, ctx));
  },
  async scheduled(_controller: WorkerScheduledController, bindings: Record<string, unknown>, ctx: WorkerExecutionContext): Promise<void> {
    await scheduledTick(stringEnv(bindings), ctx, deploymentJobs);
  },
};
