// The Neon driver for edge runtimes (Vercel Edge, Cloudflare Workers): Web APIs only.
import { JobsError } from "../errors.js";
import { read } from "../settings/catalog.js";
import { neon, neonConfig, Pool } from "@neondatabase/serverless";
import type { Env } from "../settings/library.js";
import { fromNeonHttp, fromPg } from "../db.js";
import { CONNECT_TIMEOUT_MS, type Connection, databaseUrl, logIdleConnectionError } from "./connection.js";

/** The driver's own HTTP endpoint (`api.` and the database host less its first label), and what NEON_LOCAL_HTTP replaced. */
const DRIVER_ENDPOINT = neonConfig.fetchEndpoint;
let replaced: { endpoint: typeof neonConfig.fetchEndpoint } | undefined;

/**
 * Points the driver at a local, unencrypted endpoint instead of Neon's:
 * NEON_LOCAL_WSPROXY=host:port for a WebSocket-to-TCP proxy (Neon's wsproxy, or
 * test/support/ws-proxy.ts) and NEON_LOCAL_HTTP=http://host:port/sql for an
 * SQL-over-HTTP endpoint. Unset in production, where Neon's endpoints are used.
 */
const configure = (env: Env): void => {
  const proxy = read(env, "NEON_LOCAL_WSPROXY");
  if (proxy) {
    neonConfig.wsProxy = (host, port) => `${proxy}/v2?address=${host}:${port}`;
    neonConfig.useSecureWebSocket = false;
    neonConfig.pipelineTLS = false;
    neonConfig.pipelineConnect = false;
  }
  // The driver's settings are global: an endpoint set for one env is put back for another without it.
  const http = read(env, "NEON_LOCAL_HTTP");
  if (http) {
    replaced ??= { endpoint: neonConfig.fetchEndpoint };
    neonConfig.fetchEndpoint = http;
  } else if (replaced) {
    neonConfig.fetchEndpoint = replaced.endpoint;
    replaced = undefined;
  }
};

/** A Neon Pool over WebSockets: one connection carries every statement of a tick. */
export const neonPool = (env: Env, max = 5): Connection => {
  configure(env);
  // Never closed for idling (idleTimeoutMillis 0): the pool lives for one tick or request and is closed after it,
  // and a tick waiting 10 s for its runs had its connection closed and opened again, one more of a Worker's
  // few subrequests; refused, its finished runs stayed running.
  const pool = new Pool({ connectionString: databaseUrl(env), max, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, idleTimeoutMillis: 0 });
  pool.on("error", logIdleConnectionError);
  return { db: fromPg(pool), close: () => pool.end() };
};

/**
 * Neon's Pool on Node: Node before 22 has no WebSocket of its own, and every statement failed as a network
 * error (a 500 with a stack). Said as the setting it is (a Worker always has one: not in its bundle).
 */
export const nodeNeonPool = (env: Env, max?: number): Connection => {
  if (typeof globalThis.WebSocket === "undefined" && !neonConfig.webSocketConstructor) {
    throw new JobsError("invalid_config", "this runtime has no WebSocket for Neon's Pool: use Node 22 or later, or set neonConfig.webSocketConstructor (ws)");
  }
  return neonPool(env, max);
};

/** Hosts of Neon's endpoints (Vercel's Postgres is Neon's, under a domain of its own). */
const NEON_HOST = /\.(neon\.tech|vercel-storage\.com)$/i;

/** Neon's `neon()` over HTTP: one round trip per statement, no connection to open or close. */
export const neonHttp = (env: Env): Connection => {
  configure(env);
  const url = databaseUrl(env);
  // neon() sends the connection string, password and all, to the host with its first label made `api.`:
  // for a database that is not Neon's, a host that is not the database's (api.fly.dev for my-pg.fly.dev).
  // An endpoint set on purpose (NEON_LOCAL_HTTP, or the app's own neonConfig) is trusted.
  const host = URL.canParse(url) ? new URL(url).hostname : "";
  if (neonConfig.fetchEndpoint === DRIVER_ENDPOINT && !NEON_HOST.test(host)) {
    throw new JobsError("invalid_config", `DATABASE_URL's host ${JSON.stringify(host)} is not a Neon endpoint (*.neon.tech): on this runtime the API reaches the database through Neon's HTTP endpoint, which would be sent its password; use a Neon database here`);
  }
  return { db: fromNeonHttp(neon(url)), close: async () => {} };
};

/**
 * The transport for request handlers: `http` (default) sends each statement as
 * one HTTP request, which suits an enqueue (one statement); `ws` opens a Pool for
 * the request. JOBS_NEON_TRANSPORT picks.
 */
export const neonForRequest = (env: Env, pool = neonPool): Connection => (read(env, "JOBS_NEON_TRANSPORT") === "ws" ? pool(env) : neonHttp(env));
