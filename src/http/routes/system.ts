import { errorText } from "../../error-text.js";
import { readTickRequest } from "../tick-request.js";
import type { AnyJob } from "../../job.js";
import { type Handler, type Handlers, jobsOf } from "../api-context.js";
import { queryParams } from "../params.js";
import { ApiError, errorResponse } from "../api-errors.js";
import { misconfiguration } from "../../errors.js";

/**
 * The tick: CRON_SECRET only (checked by the route's auth). A platform runs it its own way
 * (`config.tick`); an async request is answered 202 at once where work can outlive the response.
 */
const tick: Handler = async (c, config) => {
  // A HEAD is answered by the GET route, and must not have the effect of one: it would run a tick.
  if (c.req.method === "HEAD") throw new ApiError("method_not_allowed", "HEAD does not run a tick; use GET or POST", { allow: ["GET", "POST"] }, { Allow: "GET, POST" });
  const req = readTickRequest((name) => c.req.header(name));
  const run = async () => {
    if (config.tick) return config.tick(req, c);
    const options = typeof config.tickOptions === "function" ? await config.tickOptions(c) : config.tickOptions;
    return (await jobsOf(c)).tick({ ...options, handoff: req.handoff });
  };
  if (req.async && config.background) {
    const work = run().catch((error: unknown) => config.logger.log("error", "tick failed", { error: errorText(error) }));
    c.get("outlive")(work);
    config.background(work, c);
    return c.json({ accepted: true }, 202);
  }
  return c.json(await run());
};

let openapi: { registry: ReadonlyMap<string, AnyJob>; schemas: unknown; make: unknown; doc: Record<string, unknown> } | undefined;

/** The same job definitions: a queue made per request (Vercel, Workers) has a new registry of the same jobs (265 ms to document 2,000 again). */
const sameJobs = (a: ReadonlyMap<string, AnyJob>, b: ReadonlyMap<string, AnyJob>): boolean => {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [name, job] of a) if (b.get(name) !== job) return false;
  return true;
};

export const systemHandlers: Handlers<"stats" | "health" | "tick" | "tick.get" | "openapi"> = {
  async stats(c) {
    // It takes none: a parameter given is a mistake to say (it was ignored).
    queryParams(c, "stats");
    return c.json(await (await jobsOf(c)).stats());
  },
  // Open: no secrets in the answer, only whether the database answers and when a tick last ran.
  async health(c, config) {
    try {
      // Inside the try: a connection that cannot even be opened (DATABASE_URL unset) is "unavailable" too.
      return c.json(await (await jobsOf(c)).health());
    } catch (e) {
      // Unavailable either way; but a setting the deployment got wrong is said as such, not as the database down.
      const wrong = misconfiguration(e);
      // Unreachable at warn: a probe asks every few seconds while an outage lasts.
      config.logger.log(wrong !== undefined ? "error" : "warn", wrong !== undefined ? "health check: misconfigured" : "health check: database unreachable", { error: errorText(e) });
      return errorResponse(c, "unavailable", wrong !== undefined ? `the server is misconfigured${wrong}; see its logs` : "the database does not answer");
    }
  },
  tick,
  "tick.get": tick,
  async openapi(c, config) {
    const make = config.openApi;
    if (!make) throw new ApiError("no_route", "this deployment serves no OpenAPI document: a Cloudflare Worker passes { openApi: openApiDocument } from pgtick/http to serve it");
    const jobs = await jobsOf(c);
    if (!openapi || !sameJobs(openapi.registry, jobs.registry) || openapi.schemas !== config.payloadSchemas || openapi.make !== make) {
      openapi = { registry: jobs.registry, schemas: config.payloadSchemas, make, doc: make(jobs.registry, config.payloadSchemas) };
    }
    return c.json(openapi.doc);
  },
};
