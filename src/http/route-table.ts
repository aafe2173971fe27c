/**
 * Every route of the HTTP API, once: the Hono app registers its handlers from
 * this table (and answers 405 from it), the OpenAPI document describes these
 * entries, and the typed client builds its calls from them. Plain data with no
 * imports, so the client bundle carries nothing else of the server.
 *
 * The name of a route is the name of the call on `jobs` and on the client
 * (`deadLetters.replay` is `jobs.deadLetters.replay` and `client.deadLetters.replay`).
 */
export const ROUTES = {
  enqueue: { method: "POST", path: "/api/jobs", auth: "token", summary: "Enqueue a job, or a batch of up to 1,000 in one statement" },
  list: { method: "GET", path: "/api/jobs", auth: "token", query: ["job", "status", "limit", "cursor"], summary: "Queued and running jobs, newest first" },
  get: { method: "GET", path: "/api/jobs/:id", auth: "token", summary: "A job: queued, running, dead, or succeeded (with its output), and its attempts" },
  cancel: { method: "DELETE", path: "/api/jobs/:id", auth: "token", summary: "Cancel a queued job" },
  run: { method: "POST", path: "/api/jobs/:id/run", auth: "token", summary: "Make a queued job due now (delayed, backing off or debounced); one already due keeps its place" },
  "deadLetters.list": {
    method: "GET", path: "/api/dead-letters", auth: "token", query: ["job", "reason", "limit", "cursor"], summary: "Dead letters, most recent first",
  },
  "deadLetters.replayMany": {
    method: "POST", path: "/api/dead-letters/replay", auth: "token", summary: "Replay many dead letters in one statement: by ids, or the oldest of a job (of one reason, if given)",
  },
  "deadLetters.discardMany": { method: "POST", path: "/api/dead-letters/discard", auth: "token", summary: "Discard many dead letters in one statement" },
  "deadLetters.get": { method: "GET", path: "/api/dead-letters/:id", auth: "token", summary: "A dead letter" },
  "deadLetters.replay": {
    method: "POST", path: "/api/dead-letters/:id/replay", auth: "token",
    summary: "Queue a dead letter again (its id kept, attempt 0), optionally with an edited payload checked by the job's schema",
  },
  "deadLetters.discard": { method: "DELETE", path: "/api/dead-letters/:id", auth: "token", summary: "Discard a dead letter" },
  "runs.list": {
    method: "GET", path: "/api/runs", auth: "token",
    query: ["job", "outcome", "jobId", "correlationId", "idempotencyKey", "since", "until", "limit", "cursor"],
    summary: "The run history: every attempt that ended, newest first",
  },
  "runs.get": { method: "GET", path: "/api/runs/:id", auth: "token", summary: "A run, with its output, error, stack and log lines" },
  "runs.rerun": { method: "POST", path: "/api/runs/:id/rerun", auth: "token", summary: "Enqueue a new job with the run's job, payload and correlation id" },
  "schedules.list": { method: "GET", path: "/api/schedules", auth: "token", query: ["next", "limit", "cursor"], summary: "Schedules with their next runs, by name" },
  "schedules.pause": { method: "POST", path: "/api/schedules/:name/pause", auth: "token", summary: "Pause a schedule" },
  "schedules.resume": { method: "POST", path: "/api/schedules/:name/resume", auth: "token", summary: "Resume a schedule" },
  "schedules.run": { method: "POST", path: "/api/schedules/:name/run", auth: "token", summary: "Enqueue the schedule's job now" },
  stats: {
    method: "GET", path: "/api/stats", auth: "token",
    summary: "Queue depth per job and status, oldest waiting age, dead letters per job, per-minute counts of the last hour, the ticks",
  },
  health: { method: "GET", path: "/api/health", auth: "open", summary: "Liveness and database reachability; no auth" },
  tick: { method: "POST", path: "/api/tick", auth: "cron", summary: "Run one tick (the platform cron's target, and the kick's)" },
  "tick.get": { method: "GET", path: "/api/tick", auth: "cron", summary: "Run one tick (Vercel Cron sends GET)" },
  openapi: { method: "GET", path: "/api/openapi.json", auth: "token", summary: "This API as OpenAPI 3.1, with each job's payload schema" },
} as const satisfies Record<string, RouteSpec>;

export interface RouteSpec {
  readonly method: "GET" | "POST" | "DELETE";
  /** Hono's syntax: `:name` is a path parameter. */
  readonly path: string;
  /** `token`: JOBS_API_TOKEN; `cron`: CRON_SECRET only; `open`: none. */
  readonly auth: "token" | "cron" | "open";
  /** The query parameters the route takes; any other is refused. */
  readonly query?: readonly string[];
  readonly summary: string;
}

export type RouteName = keyof typeof ROUTES;

/** The methods each path answers, for 405 with an Allow header. */
export const methodsByPath = (): Map<string, string[]> => {
  const map = new Map<string, string[]>();
  for (const route of Object.values(ROUTES) as RouteSpec[]) map.set(route.path, [...(map.get(route.path) ?? []), route.method]);
  const order = ["GET", "POST", "DELETE"];
  for (const methods of map.values()) methods.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return map;
};

/** A route's path with its parameters filled in (each URL-encoded). */
export const pathOf = (name: RouteName, params: Record<string, string> = {}): string =>
  ROUTES[name].path.replace(/:(\w+)/g, (_, key: string) => encodeURIComponent(params[key] ?? ""));
