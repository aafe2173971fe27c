// node-postgres for Node runtimes (the Vercel tick): plain TCP, any PostgreSQL 14+, Neon included.
import pg from "pg";
import type { Env } from "../config.js";
import { fromPg } from "../db.js";
import { type Connection, databaseUrl } from "./connection.js";

export const pgPool = (env: Env, max = 5): Connection => {
  const pool = new pg.Pool({ connectionString: databaseUrl(env), max });
  // An idle client's error (the server restarting) must not crash the function.
  pool.on("error", () => {});
  return { db: fromPg(pool), close: () => pool.end() };
};
