import pg from "pg";
import { inject } from "vitest";

export const serverUrl = (): string => inject("databaseUrl");

/** URL of the same server with another database name. */
export const withDatabase = (url: string, database: string): string => {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
};

/**
 * A new, empty database on the test server, so test files run in parallel
 * without seeing each other's rows. Dropped when `drop` is called.
 */
export const freshDatabase = async (label = "t"): Promise<{ url: string; name: string; drop: () => Promise<void> }> => {
  const admin = new pg.Client({ connectionString: serverUrl() });
  await admin.connect();
  const name = `${label}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`.toLowerCase();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    url: withDatabase(serverUrl(), name),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
};
