// Statement counts, two ways: at the driver (every `query` a pg Client sends,
// for every system alike) and at the server (pg_stat_statements, when loaded).
import pg from "pg";
import type { BenchServer } from "./server.js";

type QueryFn = (...args: unknown[]) => unknown;

let driverStatements = 0;
const counted = new WeakSet<object>();

/**
 * Counts every statement sent through this copy of node-postgres. A Pool's
 * `query` goes through `Client.prototype.query`, so each statement counts once.
 */
export const countStatementsOf = (module: { readonly Client: { readonly prototype: object } }): void => {
  const proto = module.Client.prototype as { query: QueryFn };
  if (counted.has(proto)) return;
  counted.add(proto);
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    driverStatements++;
    return original.apply(this, args);
  };
};

/**
 * Counts every statement sent through node-postgres in this process: the main
 * install's `pg` (ours, bare SQL) here, the peers' own copy when they are loaded
 * (bench/peers.ts).
 */
export const installDriverCounter = (): void => countStatementsOf(pg);

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
