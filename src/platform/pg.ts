// node-postgres for Node runtimes (the Vercel tick): plain TCP, any PostgreSQL 14+, Neon included.
import pg from "pg";
import type { Env } from "../settings/library.js";
import { fromPg } from "../db.js";
import { CONNECT_TIMEOUT_MS, type Connection, databaseUrl, logIdleConnectionError } from "./connection.js";

export const pgPool = (env: Env, max = 5): Connection => {
  // Never closed for idling: it lives for one tick and is closed after it (see neon.ts).
  const pool = new pg.Pool({ connectionString: databaseUrl(env), max, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, idleTimeoutMillis: 0 });
  pool.on("error", logIdleConnectionError);
  return { db: fromPg(pool), close: () => pool.end() };
};
