// The JSON API (and dashboard) on Vercel's Edge runtime: Web APIs only, the Neon driver
// (one HTTP round trip per statement by default), the low-latency kick under waitUntil.
import { waitUntil } from "@vercel/functions";
import { deploymentApp } from "../../src/platform/deployment-app.js";
import { kickEnabled, VERCEL_TICK } from "../../src/platform/budget.js";
import { coalesced, kickTickEndpoint } from "../../src/platform/kick.js";
import { neonForRequest } from "../../src/platform/neon.js";
import { deploymentJobs } from "../jobs.js";

const env = process.env;
// One kick in flight per isolate; enqueues meanwhile share one more.
const kick = coalesced(() => kickTickEndpoint(env));

const app = deploymentApp({
  env,
  connect: neonForRequest,
  jobs: deploymentJobs,
  platform: () => VERCEL_TICK,
  onDueNow: kickEnabled(env)
    ? () => {
        waitUntil(kick());
      }
    : undefined,
});

export default (request: Request): Promise<Response> => Promise.resolve(app.fetch(request));
