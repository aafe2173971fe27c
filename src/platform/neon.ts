// The Neon driver for edge runtimes (Vercel Edge, Cloudflare Workers): Web APIs only.
import { read } from "../settings/catalog.js";
import { neon, neonConfig, Pool } from "@neondatabase/serverless";
import type { Env } from "../settings/library.js";
import { fromNeonHttp, fromPg } from "../db.js";
import { CONNECT_TIMEOUT_MS, type Connection, databaseUrl, logIdleConnectionError } from "./connection.js";

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
  const http = read(env, "NEON_LOCAL_HTTP");
  if (http) neonConfig.fetchEndpoint = http;
};

/** A Neon Pool over WebSockets: one connection carries every statement of a tick. */
export const neonPool = (env: Env, max = 5): Connection => {
  configure(env);
  const pool = new Pool({ connectionString: databaseUrl(env), max, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  pool.on("error", logIdleConnectionError);
  return { db: fromPg(pool), close: () => pool.end() };
};

/** Neon's `neon()` over HTTP: one round trip per statement, no connection to open or close. */
export const neonHttp = (env: Env): Connection => {
  configure(env);
  return { db: fromNeonHttp(neon(databaseUrl(env))), close: async () => {} };
};

/**
 * The transport for request handlers: `http` (default) sends each statement as
 * one HTTP request, which suits an enqueue (one statement); `ws` opens a Pool for
 * the request. JOBS_NEON_TRANSPORT picks.
 */
export const neonForRequest = (env: Env): Connection => (read(env, "JOBS_NEON_TRANSPORT") === "ws" ? neonPool(env) : neonHttp(env));
