import { read } from "../settings/catalog.js";
import type { Env } from "../settings/library.js";
import type { Db } from "../db.js";
import { JobsError } from "../errors.js";

/** How long a pool may take to open a connection (the statements' own bound is usually shorter). */
export const CONNECT_TIMEOUT_MS = 10_000;

/** A database handle opened for one invocation; `close` ends its connections before the invocation returns. */
export interface Connection {
  readonly db: Db;
  close(): Promise<void>;
}

/** DATABASE_URL, or an `invalid_config` error that says what to set. */
export const databaseUrl = (env: Env): string => {
  const url = read(env, "DATABASE_URL");
  if (!url) throw new JobsError("invalid_config", "DATABASE_URL is not set: set it to the PostgreSQL connection string (for Neon, the pooled one)", { setting: "DATABASE_URL" });
  return url;
};

/**
 * For the pools the entrypoints open: an idle connection the server ends (a restart,
 * pg_terminate_backend) emits `error` on the pool, which would end the process
 * without a listener. It is logged; the pool opens a new connection when one is needed.
 */
export const logIdleConnectionError = (error: Error): void =>
  console.warn(JSON.stringify({ time: new Date().toISOString(), level: "warn", msg: "idle database connection failed", error: error.message }));
