import type { AnyVarName } from "./dev-catalog.js";

/**
 * What each variable of the catalog means and its default as the README shows them, for the
 * README's settings tables (`npm run gen:readme`) only: deployed code never needs the prose.
 * Keyed by every name of the catalog, so a variable cannot go undocumented.
 */
export const VAR_DOCS: { readonly [N in AnyVarName]: readonly [defaultShown: string, meaning: string] } = {
  JOBS_CONCURRENCY: ["10", "handlers at once in one tick (at most 10,000)"],
  JOBS_BATCH_SIZE: ["the concurrency", "rows per claim statement, never more than the free slots, nor than 256 MiB of payloads at their limit (128 at the default 1 MiB, 1,024 at 128 KiB): a claim's rows arrive as one string, and one past what V8 can hold crashed the process"],
  JOBS_TICK_BUDGET: ["50s", "how long a tick runs handlers; keep it below the platform's limit (on a platform it may only lower the limit minus the margin, and is at least 1s)"],
  JOBS_CLAIM_CUTOFF: ["5s", "stop claiming this long before the deadline (at most half the budget)"],
  JOBS_TICK_GRACE: ["5s", "how long past its deadline a tick may take to settle and requeue; every statement it sends is bounded by the time left plus this (0, or at least 100 ms)"],
  JOBS_LEASE: ["60s", "minimum lease per claim"],
  JOBS_LEASE_MARGIN: ["15s", "a claim's lease is at least the rest of the budget plus JOBS_TICK_GRACE plus this"],
  JOBS_MAX_TICKS: ["4", "ticks running at once across the whole deployment, each holding a connection (two while a second statement is out, on a pool); `1` is one tick at a time, at most 256"],
  JOBS_CLAIM_INTERVAL: ["1s", "while a tick runs jobs with free slots and found nothing due, it claims again this often"],
  JOBS_TABLE_PREFIX: ["`jobs_`", "prefix of every table, so several queues can share a database"],
  JOBS_MAX_PAYLOAD_BYTES: ["1048576", "largest payload accepted: its JSON in UTF-8, numbers counted as stored (PostgreSQL writes `1e308` in 309 digits); at most 16 MiB (over HTTP, JOBS_MAX_BODY_BYTES bounds the request as well)"],
  JOBS_MAX_ATTEMPTS: ["5", "for jobs that do not say (1 to 1,000)"],
  JOBS_HISTORY_RETENTION: ["7d", "how long run history (every attempt, with output, error, stack and logs) is kept; `off` records none"],
  JOBS_METRICS_RETENTION: ["30d", "how long the counts, duration histograms and queue depths are kept: per minute for the last 75 minutes or so, then folded into quarter-hours (a busy tick's cleanup does it)"],
  JOBS_DEAD_LETTER_RETENTION: ["keep", "how long dead letters are kept; `keep` keeps them until replayed or discarded"],
  JOBS_MAX_OUTPUT_BYTES: ["65536", "largest handler return value recorded in the history; a larger one is marked truncated, never a failure"],

  DATABASE_URL: ["unset", "the PostgreSQL connection string, a `postgres://` URL; unset in tests and `npm run dev` means an embedded PostgreSQL"],

  JOBS_API_TOKEN: ["unset (closed)", "tokens for every `/api` route except `/api/tick` and `/api/health` (`Authorization: Bearer`), comma-separated to rotate"],
  CRON_SECRET: ["unset (closed)", "the only credential `/api/tick` takes: one value, as Vercel Cron sends it"],
  JOBS_MAX_BODY_BYTES: ["1048576", "largest request body, checked before and while reading (raise it with JOBS_MAX_PAYLOAD_BYTES: a body carries its payload)"],

  JOBS_PLATFORM_LIMIT: ["Vercel: the deadline, else 60s; Workers: 30s", "wall time one tick invocation may take (on Vercel it may only lower what `getDeadline()` says is left)"],
  JOBS_SAFETY_MARGIN: ["Vercel 10s, Workers 5s", "kept back from the limit for the final requeue, closing the pool and the response; at least 1s"],
  JOBS_KICK: ["on", "`off`: enqueued jobs wait for the next tick instead of starting one"],
  JOBS_KICK_BUDGET: ["10s", "how long a tick started by the kick claims (never more than the cron tick's budget; at least 1ms); what it started runs to the tick's budget, as under a cron tick"],
  JOBS_KICK_URL: ["`https://$VERCEL_URL/api/tick`", "Vercel: where the kick and extra ticks are sent (your production domain's `/api/tick`); never a request's Host"],
  JOBS_NEON_TRANSPORT: ["`http`", "`ws`: request handlers open a Neon `Pool` per request instead of `neon()` over HTTP"],
  NEON_LOCAL_WSPROXY: ["unset", "local testing only: a `host:port` WebSocket-to-TCP proxy for the Neon driver"],
  NEON_LOCAL_HTTP: ["unset", "local testing only: an `http://host:port/sql` endpoint for `neon()`"],
  VERCEL_URL: ["set by Vercel", "the deployment's own host, the kick's target when `JOBS_KICK_URL` is unset"],
  VERCEL: ["set by Vercel", "`1` on Vercel: the dashboard's login throttle then trusts `x-real-ip`"],

  DASHBOARD_PASSWORD: ["unset (closed)", "what operators log in with; at least 12 characters"],
  DASHBOARD_SECRET: ["derived from the password", "signs the session cookie; at least 32 characters"],
  DASHBOARD_SESSION_TTL: ["12h", "how long a login lasts (1m to 24d); shortened, it ends the logins that would last longer"],
  DASHBOARD_ORIGINS: ["unset", "comma-separated extra origins allowed to post forms (a proxy that rewrites the Host)"],
  DASHBOARD_CLIENT_IP_HEADER: ["unset", "the header your own proxy sets to the client's address, for the login throttle"],

  PORT: ["8787", "the port of the API and dashboard"],
  HOST: ["127.0.0.1", "the address they listen on"],
  TICK_INTERVAL: ["1m", "how often the local cron ticks, e.g. `5s` while developing (at least 100ms)"],
  DEV_DIR: ["`.dev`", "where the data, `secrets.json`, `postgres.log` and `server.json` live"],
  DEV_PG_PORT: ["a free port", "port of the embedded PostgreSQL"],
  JOBS_MODULE: ["`functions/jobs.ts`", "your jobs module, for `npm run dev` and the CLI"],
  DEV_SEED: ["on", "`off`: do not enqueue the module's `seed` jobs on fresh tables"],
  LOG_LEVEL: ["info", "`debug` shows idle ticks"],
  LOG_FORMAT: ["text", "`json` prints the library's JSON lines"],
  NO_COLOR: ["unset", "set: no colours in the dev server's log"],
};
