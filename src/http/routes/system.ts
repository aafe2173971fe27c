import { errorText } from "../../error-text.js";
import type { AnyJob } from "../../job.js";
import { type Handler, type Handlers, jobsOf } from "../api-context.js";
import { errorResponse } from "../api-errors.js";
import { openApiDocument } from "../openapi.js";

/** The tick: CRON_SECRET only (checked by the route's auth); its budget from the deployment's tick options. */
const tick: Handler = async (c, config) => {
  const tickOptions = typeof config.tickOptions === "function" ? await config.tickOptions(c) : config.tickOptions;
  return c.json(await (await jobsOf(c)).tick(tickOptions));
};

let openapi: { registry: ReadonlyMap<string, AnyJob>; doc: Record<string, unknown> } | undefined;

export const systemHandlers: Handlers<"stats" | "health" | "tick" | "tick.get" | "openapi"> = {
  async stats(c) {
    return c.json(await (await jobsOf(c)).stats());
  },
  // Open: no secrets in the answer, only whether the database answers and when a tick last ran.
  async health(c, config) {
    try {
      // Inside the try: a connection that cannot even be opened (DATABASE_URL unset) is "unavailable" too.
      return c.json(await (await jobsOf(c)).health());
    } catch (e) {
      config.logger.log("error", "health check: database unreachable", { error: errorText(e) });
      return errorResponse(c, "unavailable", "the database does not answer");
    }
  },
  tick,
  "tick.get": tick,
  async openapi(c) {
    const jobs = await jobsOf(c);
    if (openapi?.registry !== jobs.registry) openapi = { registry: jobs.registry, doc: openApiDocument(jobs.registry) };
    return c.json(openapi.doc);
  },
};
