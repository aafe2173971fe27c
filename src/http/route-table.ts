/**
 * Every route of the HTTP API, once: the Hono app registers its handlers from
 * this table (and answers 405 from it), the OpenAPI document describes these
 * entries (with the words of route-summaries.ts), and the typed client builds its
 * calls from them. Plain data with no imports, so the client bundle carries
 * nothing else of the server.
 *
 * The name of a route is the name of the call on `jobs` and on the client
 * (`deadLetters.replay` is `jobs.deadLetters.replay` and `client.deadLetters.replay`).
 */
export const ROUTES = {
  enqueue: { method: "POST", path: "/api/jobs", auth: "token" },
  list: { method: "GET", path: "/api/jobs", auth: "token", query: ["job", "status", "limit", "cursor"] },
  get: { method: "GET", path: "/api/jobs/:id", auth: "token" },
  cancel: { method: "DELETE", path: "/api/jobs/:id", auth: "token" },
  run: { method: "POST", path: "/api/jobs/:id/run", auth: "token" },
  "deadLetters.list": { method: "GET", path: "/api/dead-letters", auth: "token", query: ["job", "reason", "limit", "cursor"] },
  "deadLetters.replayMany": { method: "POST", path: "/api/dead-letters/replay", auth: "token" },
  "deadLetters.discardMany": { method: "POST", path: "/api/dead-letters/discard", auth: "token" },
  "deadLetters.get": { method: "GET", path: "/api/dead-letters/:id", auth: "token" },
  "deadLetters.replay": { method: "POST", path: "/api/dead-letters/:id/replay", auth: "token" },
  "deadLetters.discard": { method: "DELETE", path: "/api/dead-letters/:id", auth: "token" },
  "runs.list": {
    method: "GET", path: "/api/runs", auth: "token",
    query: ["job", "outcome", "jobId", "correlationId", "idempotencyKey", "since", "until", "limit", "cursor"],
  },
  "runs.get": { method: "GET", path: "/api/runs/:id", auth: "token" },
  "runs.rerun": { method: "POST", path: "/api/runs/:id/rerun", auth: "token" },
  "schedules.list": { method: "GET", path: "/api/schedules", auth: "token", query: ["next", "limit", "cursor"] },
  "schedules.pause": { method: "POST", path: "/api/schedules/:name/pause", auth: "token" },
  "schedules.resume": { method: "POST", path: "/api/schedules/:name/resume", auth: "token" },
  "schedules.run": { method: "POST", path: "/api/schedules/:name/run", auth: "token" },
  stats: { method: "GET", path: "/api/stats", auth: "token" },
  health: { method: "GET", path: "/api/health", auth: "open" },
  tick: { method: "POST", path: "/api/tick", auth: "cron" },
  "tick.get": { method: "GET", path: "/api/tick", auth: "cron" },
  openapi: { method: "GET", path: "/api/openapi.json", auth: "token" },
} as const satisfies Record<string, RouteSpec>;

export interface RouteSpec {
  readonly method: "GET" | "POST" | "DELETE";
  /** Hono's syntax: `:name` is a path parameter. */
  readonly path: string;
  /** `token`: JOBS_API_TOKEN; `cron`: CRON_SECRET only; `open`: none. */
  readonly auth: "token" | "cron" | "open";
  /** The query parameters the route takes; any other is refused. */
  readonly query?: readonly string[];
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
