// The Cloudflare Worker: `scheduled` runs the minute tick, `fetch` serves the API.
import { scheduledTick } from "../../src/platform/scheduled.js";
import { stringEnv, type WorkerExecutionContext, type WorkerScheduledController } from "../../src/platform/workers.js";
import { deploymentJobs } from "../jobs.js";

export default {
  async fetch(): Promise<Response> {
    return new Response("not found", { status: 404 });
  },
  async scheduled(_controller: WorkerScheduledController, bindings: Record<string, unknown>, ctx: WorkerExecutionContext): Promise<void> {
    await scheduledTick(stringEnv(bindings), ctx, deploymentJobs);
  },
};
