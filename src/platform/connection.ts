import type { Env } from "../config.js";
import type { Db } from "../db.js";
import { JobsError } from "../errors.js";

/** A database handle opened for one invocation; `close` ends its connections before the invocation returns. */
export interface Connection {
  readonly db: Db;
  close(): Promise<void>;
}

/** DATABASE_URL, or an `invalid_config` error that says what to set. */
export const databaseUrl = (env: Env): string => {
  const url = env.DATABASE_URL;
  if (!url) throw new JobsError("invalid_config", "DATABASE_URL is not set: set it to the PostgreSQL connection string (for Neon, the pooled one)", { setting: "DATABASE_URL" });
  return url;
};
