// `pgtick/vercel`: the JSON API and the dashboard as Vercel's Edge function. Web APIs only,
// the Neon driver (one HTTP round trip per statement by default), the kick under waitUntil.
// The tick function, on the Node.js runtime, is `pgtick/vercel/tick`.
import { waitUntil } from "@vercel/functions";
import type { JobsModule } from "../module/jobs-module.js";
import type { Env } from "../settings/parse.js";
import { VERCEL_TICK } from "./budget.js";
import { deploymentApp } from "./deployment-app.js";
import { httpKick, kickEnabled } from "./kick.js";
import { neonForRequest, nodeNeonPool } from "./neon.js";
import { zodPayloadSchemas } from "../http/payload-schemas.js";
import { openApiDocument } from "../http/openapi.js";
import { ApiError } from "../http/api-errors.js";

/** The shape of a jobs module, the argument of this entry point. */
export type { JobsModule } from "../module/jobs-module.js";

export interface VercelOptions {
  /** Default: process.env. */
  readonly env?: Env;
}

/** `export default vercelApi(jobsModule)` in the function Vercel rewrites every path but `/api/tick` to. */
export const vercelApi = (module: JobsModule, options: VercelOptions = {}): ((request: Request) => Promise<Response>) => {
  const env = options.env ?? process.env;
  // A due-now enqueue starts a tick invocation of the tick function (one request in flight per isolate).
  const kick = httpKick(env);
  const d = {
    module,
    env,
    platform: () => VERCEL_TICK,
    connect: nodeNeonPool,
    connectRequest: (e: Env) => neonForRequest(e, nodeNeonPool),
    // Reached only when routing sends a path like /api/tick/ or /api//tick here instead of to the tick function:
    // a tick here would run in the Edge runtime (25 s to answer) with the Node function's budget. Refused.
    tick: async () => {
      throw new ApiError("no_route", "ticks run in the tick function, at /api/tick exactly: this path reached the API function (check JOBS_KICK_URL and the cron's path)");
    },
    // None: an async tick request is then answered by the refusal above, not 202 before it (a start that started nothing).
    onDueNow: () => {
      if (kickEnabled(env)) waitUntil(kick());
    },
    payloadSchemas: zodPayloadSchemas,
    openApi: openApiDocument,
  };
  const app = deploymentApp(d);
  return (request) => Promise.resolve(app.fetch(request));
};
