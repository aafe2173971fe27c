import type { OpenApiDocument, PayloadSchemas } from "./payload-schemas.js";
import type { Context } from "hono";
import { Hono } from "hono/tiny";
import { createDashboard } from "../dashboard/dashboard-app.js";
import { errorStack, errorText } from "../error-text.js";
import { read } from "../settings/catalog.js";
import type { AnyJob } from "../job.js";
import type { Jobs } from "../jobs.js";
import { jsonLogger, type Logger } from "../log.js";
import type { TickOptions, TickReport } from "../tick/types.js";
import type { TickRequest } from "./tick-request.js";
import { secretsFrom } from "./auth.js";
import { checkDeclaredLength, DEFAULT_MAX_BODY_BYTES } from "./body.js";
import { type AnyJobs, type ApiConfig, type ApiEnv, type Handlers, notifyEnqueued } from "./api-context.js";
import { drainBound, settleBody } from "../body-drain.js";
import { ApiError, classify, errorResponse } from "./api-errors.js";
import { queryParams } from "./params.js";
import { methodsByPath, ROUTES, type RouteName, type RouteSpec } from "./route-table.js";
import { deadLetterHandlers } from "./routes/dead-letters.js";
import { jobHandlers } from "./routes/jobs.js";
import { runHandlers } from "./routes/runs.js";
import { faviconResponse } from "../dashboard/favicon.js";
import { scheduleHandlers } from "./routes/schedules.js";
import { systemHandlers } from "./routes/system.js";

/** `J` is inferred from `jobs`, so an instance with any job list fits (Jobs<J> is invariant in J). */
export interface AppOptions<J extends readonly AnyJob[] = readonly AnyJob[]> {
  /** The jobs instance, or a per-request factory: edge runtimes open a pool per request and close it after. */
  jobs: Jobs<J> | ((req: Request) => Promise<{ jobs: Jobs<J>; dispose?: () => Promise<void> }>);
  /** JOBS_API_TOKEN (comma-separated, for rotation), CRON_SECRET, JOBS_MAX_BODY_BYTES ... */
  env: Record<string, string | undefined>;
  /** Called after jobs were enqueued through the API (enqueue, replays, schedule run): where a deployment hooks the kick in. */
  onEnqueued?: ((info: { ids: string[]; dueNow: boolean }, c: Context) => void | Promise<void>) | undefined;
  /** Options for the tick `/api/tick` runs on `jobs` (when `tick` is not given). */
  tickOptions?: TickOptions | ((c: Context) => TickOptions | Promise<TickOptions>) | undefined;
  /**
   * Runs the tick `/api/tick` asks for, instead of `jobs.tick`: a platform entrypoint
   * opens the tick's own connection, derives its budget and lets it start more ticks.
   */
  tick?: ((req: TickRequest, c: Context) => Promise<TickReport>) | undefined;
  /**
   * Keeps work alive past the response (Vercel's and Workers' `waitUntil`): with it, a
   * `/api/tick` request with `x-pgtick-async: 1` is answered `202` at once and its tick runs on.
   */
  background?: ((work: Promise<unknown>, c: Context) => void) | undefined;
  /**
   * How /api/openapi.json describes each job's payload: `zodPayloadSchemas` (zod's JSON Schema) in
   * `pgtick/http`'s createApp and on Vercel; absent, the payloads are described as checked by the server.
   */
  payloadSchemas?: PayloadSchemas | undefined;
  /**
   * What serves /api/openapi.json: `openApiDocument`, the default of `pgtick/http`'s createApp, on
   * Vercel and in `npm run dev`; absent (a Cloudflare Worker that does not pass it), that route
   * answers 404 `no_route`, and the document's code (about 4 KB gzipped) stays out of the bundle.
   */
  openApi?: OpenApiDocument | undefined;
  /** Where server faults are logged. Default: the jobs instance's logger, else JSON lines on stdout. */
  logger?: Logger | undefined;
}


/** Every route's handler, by its name in the route table: the compiler says when one is missing. */
const HANDLERS: Handlers = { ...jobHandlers, ...runHandlers, ...deadLetterHandlers, ...scheduleHandlers, ...systemHandlers };

/**
 * The HTTP face of the library: a Hono app with web-standard Request/Response,
 * so one app serves Node, Vercel and Cloudflare Workers. `/api/*` is the JSON
 * API (API token), `/api/tick` the cron target (CRON_SECRET), `/api/health` open.
 */
export const createApp = <J extends readonly AnyJob[] = readonly AnyJob[]>(options: AppOptions<J>): Hono => {
  const logger = options.logger ?? (typeof options.jobs === "function" ? jsonLogger() : options.jobs.logger);
  // A wrong body limit fails each request that reads one (as a wrong setting does, naming it), not the
  // making of the app: that took every function of a deployment down with it, the cron's tick included.
  let maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
  let badSetting: { error: unknown } | undefined;
  try {
    maxBodyBytes = read(options.env, "JOBS_MAX_BODY_BYTES") ?? DEFAULT_MAX_BODY_BYTES;
  } catch (error) {
    badSetting = { error };
  }
  const config: ApiConfig = {
    get maxBodyBytes() {
      if (badSetting) throw badSetting.error;
      return maxBodyBytes;
    },
    apiTokens: secretsFrom(read(options.env, "JOBS_API_TOKEN"), "JOBS_API_TOKEN", "pgtick-api"),
    cronSecret: secretsFrom(read(options.env, "CRON_SECRET"), "CRON_SECRET", "pgtick-tick", { list: false }),
    logger,
    onEnqueued: options.onEnqueued,
    tickOptions: options.tickOptions,
    tick: options.tick,
    background: options.background,
    payloadSchemas: options.payloadSchemas,
    openApi: options.openApi,
  };
  // The API validates names and payloads at run time, so it needs no job types.
  const source = options.jobs as unknown as AnyJobs | ((req: Request) => Promise<{ jobs: AnyJobs; dispose?: () => Promise<void> }>);
  const app = new Hono<ApiEnv>();

  app.onError((err, c) => {
    const k = classify(err);
    // The database out of reach is one line, not a stack per request while it lasts.
    if (k.passing) {
      logger.log("warn", "http request failed: the database is unavailable", {
        method: c.req.method,
        path: c.req.path,
        error: errorText(err),
      });
    } else if (k.fault) {
      logger.log("error", "http request failed", {
        method: c.req.method,
        path: c.req.path,
        // Read safely: a thrown value whose message getter throws got no response at all.
        error: errorText(err),
        stack: errorStack(err) ?? undefined,
      });
    }
    return errorResponse(c, k.code, k.message, k.details, k.headers);
  });
  app.notFound((c) => errorResponse(c, "no_route", `no route ${c.req.method} ${c.req.path}`));

  // First in, last out: whatever answered (a 415, a 413 at the limit, a 401), no unread body is left on a
  // kept-alive connection, where a Node server would cut the client's next request off.
  const drainBytes = drainBound(maxBodyBytes);
  app.use("*", async (c, next) => {
    await next();
    if (!(await settleBody(c.req.raw, drainBytes))) c.header("Connection", "close");
  });

  // The jobs instance is made on first use, so requests refused before (auth, 404) never open a pool.
  app.use("*", async (c, next) => {
    let made: Promise<{ jobs: AnyJobs; dispose?: () => Promise<void> }> | undefined;
    const outliving: Array<Promise<unknown>> = [];
    c.set("jobs", async () => {
      made ??= badSetting ? Promise.reject(badSetting.error) : typeof source === "function" ? source(c.req.raw) : Promise.resolve({ jobs: source });
      return (await made).jobs;
    });
    c.set("outlive", (work) => void outliving.push(work));
    try {
      await next();
    } finally {
      const dispose = async () => {
        const m = await made?.catch(() => undefined);
        await m?.dispose?.().catch((e: unknown) => logger.log("warn", "disposing the per-request jobs failed", { error: String(e) }));
      };
      // Work still running after the response (it was handed to `background`) keeps the instance until it ends.
      const after = outliving.length === 0 ? undefined : Promise.allSettled(outliving).then(dispose);
      if (!after) await dispose();
      else if (config.background) config.background(after, c);
      else await after;
    }
  });

  // Every route of the table, each behind the credential its entry names (the cron secret does not
  // enqueue, an API token does not run ticks), path by path, each path's followed by 405 naming its
  // methods. Fixed paths go first: a path with a parameter beside one (`/api/dead-letters/:id` beside
  // `/api/dead-letters/replay`) would otherwise take the fixed path's other methods.
  const routes = Object.entries(ROUTES) as Array<[RouteName, RouteSpec]>;
  const paths = [...methodsByPath()].sort(([a], [b]) => Number(a.includes(":")) - Number(b.includes(":")));
  for (const [path, methods] of paths) {
    for (const [name, route] of routes.filter(([, r]) => r.path === path)) {
      const handler = HANDLERS[name];
      app.on(route.method, route.path, async (c) => {
        if (route.auth === "token") await config.apiTokens.check(c.req.header("authorization"));
        if (route.auth === "cron") await config.cronSecret.check(c.req.header("authorization"));
        // Not the health check's: it says a wrong setting as such (503), when it asks for the jobs.
        if (name !== "health") checkDeclaredLength(c.req.raw, config.maxBodyBytes);
        // A route of the API that takes no query refuses one: `POST /api/jobs?delayMs=3600000` stored a job due
        // now. (The tick's and the health check's are what schedulers and probes call, with what they add.)
        if (route.auth === "token" && route.query === undefined) queryParams(c, name);
        return handler(c, config);
      });
    }
    // A GET route answers HEAD too, except the tick's (a HEAD must not run a tick).
    const allow = [...methods, ...(methods.includes("GET") && path !== ROUTES.tick.path ? ["HEAD"] : [])];
    app.all(path, (c) => {
      throw new ApiError("method_not_allowed", `${c.req.method} is not allowed here; use ${methods.join(" or ")}`, { allow }, { Allow: allow.join(", ") });
    });
  }

  // Server-rendered pages behind their own login (DASHBOARD_PASSWORD); the jobs come from this app's per-request getter.
  // Its replays and schedule runs kick like the API's do.
  app.route("/dashboard", createDashboard({
    jobs: (c) => (c as unknown as Context<ApiEnv>).get("jobs")(),
    env: options.env,
    logger,
    onEnqueued: options.onEnqueued ? (info, c) => notifyEnqueued(config, c, info.ids, info.dueNow) : undefined,
  }));
  app.get("/", (c) => c.redirect("/dashboard/", 303));
  app.get("/favicon.ico", () => faviconResponse());

  // Hono's Variables are internal to this app; callers see a plain Hono.
  return app as unknown as Hono;
};
