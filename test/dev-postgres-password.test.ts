// The dev database's password is random per data folder, kept beside it for this user only: it was
// postgres/postgres, so any local user could log in as the superuser on the port `ps` shows. A
// cluster made before keeps working: it gets a random password at its next start.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { removeDataDir } from "../src/dev/pg-data.js";
import { postgresUser } from "../src/dev/pg-user.js";
import { startDevPostgres } from "../src/dev/postgres.js";

const root = mkdtempSync(join(tmpdir(), "pgtick-devpw-"));
const dir = join(root, "pg");
afterAll(() => {
  removeDataDir(dir, postgresUser());
  rmSync(root, { recursive: true, force: true });
});

const logsIn = async (url: string): Promise<boolean> => {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
};

it("makes a cluster with a random password, stored for this user only, and replaces the old fixed one", async () => {
  const first = await startDevPostgres({ dir });
  try {
    const password = new URL(first.url).password;
    expect(password).not.toBe("postgres");
    expect(password.length).toBeGreaterThanOrEqual(20);
    expect(await logsIn(first.url)).toBe(true);
    expect(await logsIn(`postgres://postgres:postgres@127.0.0.1:${first.port}/postgres`)).toBe(false);
    expect(statSync(`${dir}.password`).mode & 0o777).toBe(0o600);
    // What a cluster made before looked like: the fixed password, none stored.
    const client = new pg.Client({ connectionString: first.url });
    await client.connect();
    await client.query(`ALTER ROLE postgres PASSWORD 'postgres'`);
    await client.end();
    rmSync(`${dir}.password`);
  } finally {
    await first.stop();
  }
  const again = await startDevPostgres({ dir });
  try {
    expect(new URL(again.url).password).not.toBe("postgres");
    expect(await logsIn(again.url)).toBe(true);
    expect(await logsIn(`postgres://postgres:postgres@127.0.0.1:${again.port}/postgres`)).toBe(false);
  } finally {
    await again.stop();
  }
  // And the next start finds the stored one.
  const third = await startDevPostgres({ dir });
  try {
    expect(await logsIn(third.url)).toBe(true);
  } finally {
    await third.stop();
  }
}, 120_000);

it("leaves no password behind for a throwaway cluster once it stops (each test run and bench left one in the temp folder)", async () => {
  const { startEmbeddedPostgres } = await import("./support/postgres.js");
  const { existsSync } = await import("node:fs");
  const throwaway = join(root, "throwaway");
  const server = await startEmbeddedPostgres({ dir: throwaway });
  expect(existsSync(`${throwaway}.password`)).toBe(true);
  await server.stop();
  expect([existsSync(throwaway), existsSync(`${throwaway}.password`)]).toEqual([false, false]);
});
