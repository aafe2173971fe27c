// The PostgreSQL server every system is measured on: DATABASE_URL when set,
// else an embedded one started with pg_stat_statements loaded, so statement
// counts can also be read at the server.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { removePassword } from "../src/dev/pg-password.js";
import { freePort, startEmbeddedPostgres } from "../test/support/postgres.js";

export interface BenchServer {
  readonly url: string;
  readonly embedded: boolean;
  readonly version: string;
  /** Whether `pg_stat_statements` can be read; when false only driver counts exist. */
  readonly statStatements: boolean;
  /** A new empty database on the server; returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Runs one statement as the superuser in the given database. */
  admin<R extends pg.QueryResultRow = Record<string, unknown>>(database: string, text: string, params?: unknown[]): Promise<R[]>;
  stop(): Promise<void>;
}

export const withDatabase = (url: string, database: string): string => {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
};

const one = async <R extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<R[]> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
};

export const startServer = async (): Promise<BenchServer> => {
  let url: string;
  let stopServer: () => Promise<void> = async () => {};
  const embedded = !process.env.DATABASE_URL;
  if (process.env.DATABASE_URL) {
    url = process.env.DATABASE_URL;
  } else {
    // pg_stat_statements must be preloaded at server start: start once to write the
    // setting with ALTER SYSTEM, then restart the same data directory.
    const dir = mkdtempSync(join(tmpdir(), "pgtick-bench-pg-"));
    const port = await freePort();
    const first = await startEmbeddedPostgres({ dir, port, persistent: true });
    await one(first.url, "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
    await one(first.url, "ALTER SYSTEM SET pg_stat_statements.track_utility = on");
    await first.stop();
    const second = await startEmbeddedPostgres({ dir, port, persistent: true });
    url = second.url;
    stopServer = async () => {
      await second.stop();
      rmSync(dir, { recursive: true, force: true });
      removePassword(dir);
    };
  }
  const version = (await one<{ v: string }>(url, "SELECT current_setting('server_version') AS v"))[0]?.v ?? "unknown";
  const preload = await one<{ v: string }>(url, "SELECT current_setting('shared_preload_libraries') AS v");
  const statStatements = /pg_stat_statements/.test(preload[0]?.v ?? "");
  const created: string[] = [];
  return {
    url,
    embedded,
    version,
    statStatements,
    async createDatabase(name) {
      await one(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await one(url, `CREATE DATABASE ${name}`);
      created.push(name);
      const dbUrl = withDatabase(url, name);
      if (statStatements) await one(dbUrl, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      return dbUrl;
    },
    admin: (database, text, params) => one(withDatabase(url, database), text, params),
    async stop() {
      for (const name of created) await one(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await stopServer();
    },
  };
};
