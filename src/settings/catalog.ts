import { commaList, durationSetting, type Env, onOff, oneOf, port, positiveInt, retentionSetting } from "./parse.js";

/**
 * Every environment variable the project reads, once: its group, its type (the
 * parser, which names the variable in its error), its default as the README
 * shows it, and what it means. The readers below are the only places a
 * variable is read; the README's settings tables are rendered from this list
 * (`npm run gen:readme`) and a test keeps them the same.
 */
export type Group = "library" | "database" | "http" | "platform" | "dashboard" | "dev";

interface Var<T> {
  readonly group: Group;
  readonly default: string;
  readonly meaning: string;
  readonly parse: (name: string, raw: string) => T;
}

const text = (_name: string, raw: string) => raw;
const count = (name: string, raw: string) => positiveInt(name, raw);
const duration = (min = 0) => (name: string, raw: string) => durationSetting(name, raw, min);
const v = <T>(group: Group, dflt: string, meaning: string, parse: (name: string, raw: string) => T): Var<T> => ({ group, default: dflt, meaning, parse });

export const VARS = {
  JOBS_CONCURRENCY: v("library", "10", "handlers at once in one tick", count),
  JOBS_BATCH_SIZE: v("library", "the concurrency", "rows per claim statement, never more than the free slots", count),
  JOBS_TICK_BUDGET: v("library", "50s", "how long a tick runs handlers; keep it below the platform's limit (on a platform it may only lower the limit minus the margin)", duration(1)),
  JOBS_CLAIM_CUTOFF: v("library", "5s", "stop claiming this long before the deadline (at most half the budget)", duration()),
  JOBS_TICK_GRACE: v("library", "5s", "how long past its deadline a tick may take to settle and requeue; every statement it sends is bounded by the time left plus this", duration()),
  JOBS_LEASE: v("library", "60s", "minimum lease per claim", duration()),
  JOBS_LEASE_MARGIN: v("library", "15s", "a claim's lease is at least the rest of the budget plus this", duration()),
  JOBS_MAX_TICKS: v("library", "4", "ticks running at once across the whole deployment, each holding one connection; `1` is one tick at a time", count),
  JOBS_CLAIM_INTERVAL: v("library", "1s", "while a tick runs jobs with free slots and found nothing due, it claims again this often", duration(10)),
  JOBS_TABLE_PREFIX: v("library", "`jobs_`", "prefix of every table, so several queues can share a database", text),
  JOBS_MAX_PAYLOAD_BYTES: v("library", "1048576", "largest payload accepted", count),
  JOBS_MAX_ATTEMPTS: v("library", "5", "for jobs that do not say (1 to 1,000)", count),
  JOBS_HISTORY_RETENTION: v("library", "7d", "how long run history (every attempt, with output, error, stack and logs) is kept; `off` records none", (n, raw) => retentionSetting(n, raw, "off")),
  JOBS_METRICS_RETENTION: v("library", "30d", "how long the per-minute counts, duration histograms and queue depths are kept", (n, raw) => retentionSetting(n, raw)),
  JOBS_DEAD_LETTER_RETENTION: v("library", "keep", "how long dead letters are kept; `keep` keeps them until replayed or discarded", (n, raw) => retentionSetting(n, raw, "keep")),
  JOBS_MAX_OUTPUT_BYTES: v("library", "65536", "largest handler return value recorded in the history; a larger one is marked truncated, never a failure", count),

  DATABASE_URL: v("database", "unset", "the PostgreSQL connection string; unset in tests and `npm run dev` means an embedded PostgreSQL", text),

  JOBS_API_TOKEN: v("http", "unset (closed)", "tokens for every `/api` route except `/api/tick` and `/api/health` (`Authorization: Bearer`), comma-separated to rotate", text),
  CRON_SECRET: v("http", "unset (closed)", "the only credential `/api/tick` takes: one value, as Vercel Cron sends it", text),
  JOBS_MAX_BODY_BYTES: v("http", "1048576", "largest request body, checked before and while reading", count),

  JOBS_PLATFORM_LIMIT: v("platform", "Vercel: the deadline, else 60s; Workers: 30s", "wall time one tick invocation may take (on Vercel it may only lower what `getDeadline()` says is left)", duration()),
  JOBS_SAFETY_MARGIN: v("platform", "Vercel 10s, Workers 5s", "kept back from the limit for the final requeue, closing the pool and the response; at least 1s", duration()),
  JOBS_KICK: v("platform", "on", "`off`: enqueued jobs wait for the next tick instead of starting one", (n, raw) => onOff(n, raw)),
  JOBS_KICK_BUDGET: v("platform", "10s", "budget of a tick started by the kick (never more than the cron tick's)", duration()),
  JOBS_KICK_URL: v("platform", "`https://$VERCEL_URL/api/tick`", "Vercel: where the kick and extra ticks are sent (your production domain); never a request's Host", text),
  JOBS_NEON_TRANSPORT: v("platform", "`http`", "`ws`: request handlers open a Neon `Pool` per request instead of `neon()` over HTTP", oneOf("http", "ws")),
  NEON_LOCAL_WSPROXY: v("platform", "unset", "local testing only: a `host:port` WebSocket-to-TCP proxy for the Neon driver", text),
  NEON_LOCAL_HTTP: v("platform", "unset", "local testing only: an `http://host:port/sql` endpoint for `neon()`", text),
  VERCEL_URL: v("platform", "set by Vercel", "the deployment's own host, the kick's target when `JOBS_KICK_URL` is unset", text),
  VERCEL: v("platform", "set by Vercel", "`1` on Vercel: the dashboard's login throttle then trusts `x-real-ip`", text),

  DASHBOARD_PASSWORD: v("dashboard", "unset (closed)", "what operators log in with; at least 12 characters", text),
  DASHBOARD_SECRET: v("dashboard", "derived from the password", "signs the session cookie; at least 32 characters", text),
  DASHBOARD_SESSION_TTL: v("dashboard", "12h", "how long a login lasts (at least 1m)", duration(60_000)),
  DASHBOARD_ORIGINS: v("dashboard", "unset", "comma-separated extra origins allowed to post forms (a proxy that rewrites the Host)", commaList),
  DASHBOARD_CLIENT_IP_HEADER: v("dashboard", "unset", "the header your own proxy sets to the client's address, for the login throttle", text),

  PORT: v("dev", "8787", "the port of the API and dashboard", port),
  HOST: v("dev", "127.0.0.1", "the address they listen on", text),
  TICK_INTERVAL: v("dev", "1m", "how often the local cron ticks, e.g. `5s` while developing (at least 100ms)", duration(100)),
  DEV_DIR: v("dev", "`.dev`", "where the data, `secrets.json`, `postgres.log` and `server.json` live", text),
  DEV_PG_PORT: v("dev", "a free port", "port of the embedded PostgreSQL", port),
  JOBS_MODULE: v("dev", "`functions/jobs.ts`", "your jobs module, for `npm run dev` and the CLI", text),
  DEV_SEED: v("dev", "on", "`off`: do not enqueue the module's `seed` jobs on fresh tables", (n, raw) => onOff(n, raw)),
  LOG_LEVEL: v("dev", "info", "`debug` shows idle ticks", oneOf("debug", "info", "warn", "error")),
  LOG_FORMAT: v("dev", "text", "`json` prints the library's JSON lines", oneOf("text", "json")),
  NO_COLOR: v("dev", "unset", "set: no colours in the dev server's log", text),
} as const satisfies Record<string, Var<unknown>>;

export type VarName = keyof typeof VARS;
type Parsed<N extends VarName> = ReturnType<(typeof VARS)[N]["parse"]>;

/** The variable's value, parsed and checked (`invalid_config` naming it); undefined when unset or empty. */
export const read = <N extends VarName>(env: Env, name: N): Parsed<N> | undefined => {
  const raw = env[name]?.trim();
  return raw === undefined || raw === "" ? undefined : (VARS[name].parse(name, raw) as Parsed<N>);
};
