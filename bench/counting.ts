// Statement counts, two ways: at the driver (every `query` a pg Client sends,
// for every system alike) and at the server (pg_stat_statements, when loaded).
import pg from "pg";
import type { BenchServer } from "./server.js";

type QueryFn = (...args: unknown[]) => unknown;

let driverStatements = 0;
let installed = false;

/**
 * Counts every statement sent through node-postgres in this process. pg-boss,
 * graphile-worker and our `fromPg` all use the same `pg` package, and a Pool's
 * `query` goes through `Client.prototype.query`, so each statement counts once.
 */
export const installDriverCounter = (): void => {
  if (installed) return;
  installed = true;
  const proto = pg.Client.prototype as unknown as { query: QueryFn };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    driverStatements++;
    return original.apply(this, args);
  };
};

export const driverCount = (): number => driverStatements;

/** Server-side: total calls recorded in one database since the last reset. */
export const serverCounter = (server: BenchServer, database: string) => ({
  async reset(): Promise<void> {
    if (!server.statStatements) return;
    await server.admin(database, "SELECT pg_stat_statements_reset()");
  },
  async read(): Promise<number | null> {
    if (!server.statStatements) return null;
    // The reader's own statement runs in the same database; it is excluded by its text.
    const rows = await server.admin<{ n: string | null }>(
      database,
      `SELECT sum(calls)::bigint AS n FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND query NOT LIKE '%pg_stat_statements%'`,
    );
    return Number(rows[0]?.n ?? 0);
  },
});
