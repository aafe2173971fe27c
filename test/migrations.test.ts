import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { fromPg, migrate, migrationStatement } from "../src/index.js";
import { appliedVersions } from "../src/migrate.js";
import { migrations } from "../src/migrations.generated.js";
import { renderLatestModule, renderMigrationsModule } from "../scripts/gen-migrations.js";
import { LATEST_MIGRATION } from "../src/migrations.latest.js";
import { freshDatabase } from "./support/db.js";

const database = await freshDatabase("migrations");
const pools: pg.Pool[] = [];
const connect = () => {
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  pool.on("error", () => {});
  pools.push(pool);
  return fromPg(pool);
};
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await database.drop();
});

describe("migrations", () => {
  it("the bundled module (for runtimes with no file system) matches migrations/*.sql", () => {
    const generated = readFileSync(new URL("../src/migrations.generated.ts", import.meta.url), "utf8");
    expect(generated).toBe(renderMigrationsModule());
    expect(readFileSync(new URL("../src/migrations.latest.ts", import.meta.url), "utf8")).toBe(renderLatestModule());
    expect(LATEST_MIGRATION).toBe(migrations.at(-1)!.version);
    expect(migrations.map((m) => m.version)).toEqual([...migrations.map((m) => m.version)].sort((a, b) => a - b));
    expect(migrations[0]!.version).toBe(1);
  });

  it("five processes migrating at once apply each migration exactly once", async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => migrate(connect(), "race_")));
    const applied = results.flat().sort((a, b) => a - b);
    expect(applied).toEqual(migrations.map((m) => m.version));
    expect(await appliedVersions(connect(), "race_")).toEqual(migrations.map((m) => m.version));
  });

  it("with a bound, gives up a migration the database does not answer in time, applying nothing (the CLI's migrate waited for ever on a frozen connection)", async () => {
    const db = connect();
    const slow = [...migrations.slice(0, 1), { version: 2, name: "slow", sql: "SELECT pg_sleep(3);" }];
    const started = Date.now();
    await expect(migrate(db, "bounded_", slow, undefined, 300)).rejects.toThrow(/did not answer within 300 ms/);
    expect(Date.now() - started).toBeLessThan(2_500);
    // Cancelled on the server: its one transaction applied nothing, the first migration included.
    await new Promise((r) => setTimeout(r, 200));
    expect((await db.query(`SELECT to_regclass('bounded_migrations') AS t`)).rows).toEqual([{ t: null }]);
  });

  it("on a single Client, whose statement is not cancelled, what the migration applies after the bound rolls back (it committed after the caller was told it failed)", async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const slow = [...migrations.slice(0, 1), { version: 2, name: "slow", sql: "PERFORM pg_sleep(1.5);" }];
      await expect(migrate(fromPg(client), "single_", slow, undefined, 300)).rejects.toThrow(/did not answer within 300 ms/);
      // The statement runs on to its end, and then fails: nothing applied.
      await new Promise((r) => setTimeout(r, 2_000));
      expect((await connect().query(`SELECT to_regclass('single_migrations') AS t`)).rows).toEqual([{ t: null }]);
      for (const timeoutMs of [0, -5, Number.NaN, 1.5, 30 * 86_400_000]) {
        await expect(migrate(fromPg(client), "single_", slow, undefined, timeoutMs), String(timeoutMs)).rejects.toMatchObject({ code: "invalid_options" });
      }
    } finally {
      await client.end().catch(() => {});
    }
  });

  it("is idempotent and records what it applied", async () => {
    const db = connect();
    await migrate(db, "again_");
    expect(await migrate(db, "again_")).toEqual([]);
    const { rows } = await db.query<{ version: number; name: string }>(`SELECT version, name FROM again_migrations ORDER BY version`);
    expect(rows).toEqual(migrations.map((m) => ({ version: m.version, name: m.name })));
  });

  it("keeps queues under different prefixes apart", async () => {
    const db = connect();
    await migrate(db, "one_");
    await migrate(db, "two_");
    const { rows } = await db.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE tablename LIKE 'one\\_%' OR tablename LIKE 'two\\_%' ORDER BY 1`,
    );
    const names = rows.map((r) => r.name);
    expect(names).toContain("one_queue");
    expect(names).toContain("two_queue");
    expect(names.filter((n) => n.startsWith("one_")).length).toBe(names.filter((n) => n.startsWith("two_")).length);
    // A prefix that is another one's followed by a table's name: no object of one may bear a name of the other's.
    await migrate(db, "one_queue_");
    expect(await migrate(db, "one_queue_")).toEqual([]);
  });

  it("names no object of a prefix as another object under a longer prefix could be named", () => {
    const names = [...new Set(migrations.flatMap((m) => [...m.sql.matchAll(/\{\{prefix\}\}([a-z0-9_]+)/g)].map((x) => x[1]!)))];
    expect(names.flatMap((y) => names.filter((x) => x !== y && y.endsWith(x)).map((x) => `${y} = ${y.slice(0, -x.length)} + ${x}`))).toEqual([]);
  });

  it("is a single statement, so it runs over drivers without sessions or transactions", () => {
    const text = migrationStatement("x_");
    expect(text.startsWith("DO $jobs_migration$")).toBe(true);
    expect(text).toContain("pg_advisory_xact_lock");
    expect(text).not.toContain("{{prefix}}");
  });

  it("rolls back a failing migration whole and leaves nothing half-applied", async () => {
    const db = connect();
    const bad = [...migrations, { version: 999, name: "broken", sql: "CREATE TABLE {{prefix}}half (id int);\nSELECT * FROM no_such_table;" }];
    await expect(migrate(db, "broken_", bad)).rejects.toThrow(/no_such_table/);
    expect(await appliedVersions(db, "broken_")).toEqual([]);
    const { rows } = await db.query(`SELECT to_regclass('broken_half') AS t, to_regclass('broken_queue') AS q`);
    expect(rows[0]).toEqual({ t: null, q: null });
  });
});

describe("013 (one instant per claim's starts)", () => {
  it("puts out-of-order rate windows in order under their locks, leaving one a claim holds to it", async () => {
    const db = connect();
    const lock = new pg.Client({ connectionString: database.url });
    await lock.connect();
    try {
      await migrate(db, "sorted_", migrations.filter((m) => m.version <= 12));
      const unsorted = "{2026-01-01 00:00:02+00,2026-01-01 00:00:01+00,2026-01-01 00:00:03+00}";
      await db.query(`INSERT INTO sorted_flow (bucket, starts, updated_at) VALUES ('r:a:x', $1, now()), ('r:a:held', $1, now()),
        ('r:a:ok', '{2026-01-01 00:00:01+00,2026-01-01 00:00:02+00}', now())`, [unsorted]);
      // A claim holding one bucket's lock: the migration neither waits for it nor rewrites its row.
      await lock.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtext('sorted_flow'), hashtext('r:a:held'))`);
      expect(await migrate(db, "sorted_")).toEqual(migrations.filter((m) => m.version > 12).map((m) => m.version));
      await lock.query("COMMIT");
      const { rows } = await db.query<{ bucket: string; first: string }>(
        `SELECT bucket, to_char(starts[1] AT TIME ZONE 'UTC', 'SS') AS first FROM sorted_flow ORDER BY bucket`);
      expect(rows).toEqual([{ bucket: "r:a:held", first: "02" }, { bucket: "r:a:ok", first: "01" }, { bucket: "r:a:x", first: "01" }]);
    } finally {
      await lock.end();
    }
  });
});

describe("a role that is not the tables' owner", () => {
  it("refuses to start a second queue in the role's own schema when its search_path finds the tables in another (it applied all migrations again there)", async () => {
    const db = connect();
    await migrate(db, "split_");
    await db.query(`CREATE SCHEMA IF NOT EXISTS "split app"`);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(`SET search_path = "split app", public`);
      // Nothing pending: nothing to do, and nothing refused (it was: the README says such a migrate does nothing).
      expect(await migrate(fromPg(client), "split_")).toEqual([]);
      // A migration pending: applying it here would start the second queue.
      await db.query(`DELETE FROM split_migrations WHERE version = ${LATEST_MIGRATION}`);
      const e = await migrate(fromPg(client), "split_").catch((x: unknown) => x);
      expect(e).toMatchObject({ code: "invalid_config", details: { schema: "public", currentSchema: "split app" } });
      const { rows } = await client.query(`SELECT to_regclass('"split app".split_migrations')::text AS r`);
      expect(rows[0].r).toBeNull();
      expect(await migrate(db, "split_")).toEqual([LATEST_MIGRATION]);
    } finally {
      await client.end();
    }
  });

  it("refuses to start a second queue when the tables are in a schema its search_path does not reach (it created them all again, empty)", async () => {
    const db = connect();
    await db.query(`CREATE SCHEMA IF NOT EXISTS "owner space"`);
    const owner = new pg.Client({ connectionString: database.url });
    const app = new pg.Client({ connectionString: database.url });
    await owner.connect();
    await app.connect();
    try {
      await owner.query(`SET search_path = "owner space"`);
      await migrate(fromPg(owner), "far_");
      await app.query(`SET search_path = public`);
      const e = await migrate(fromPg(app), "far_").catch((x: unknown) => x);
      expect(e).toMatchObject({ code: "invalid_config", details: { schema: "owner space", currentSchema: "public" } });
      expect((e as Error).message).toContain(`which this role's search_path does not reach`);
      const { rows } = await app.query(`SELECT to_regclass('public.far_migrations')::text AS m, to_regclass('public.far_queue')::text AS q`);
      expect(rows[0]).toEqual({ m: null, q: null });
      // With the schema on its search_path, it finds them: nothing to do.
      await app.query(`SET search_path = "owner space", public`);
      expect(await migrate(fromPg(app), "far_")).toEqual([]);
    } finally {
      await owner.end();
      await app.end();
    }
  });

  it("migrates nothing, and needs no right to create, when the tables are up to date; a pending migration it may not apply is invalid_config", async () => {
    const db = connect();
    await migrate(db, "norights_");
    const role = `pgtick_norights_${process.pid}`;
    await db.query(`DROP ROLE IF EXISTS ${role}`);
    await db.query(`CREATE ROLE ${role} NOLOGIN`);
    await db.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
    await db.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
    await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(`SET ROLE ${role}`);
      // Before: 42501 permission denied for schema public, with nothing to apply.
      expect(await migrate(fromPg(client), "norights_")).toEqual([]);
      await db.query(`DELETE FROM norights_migrations WHERE version = ${LATEST_MIGRATION}`);
      await expect(migrate(fromPg(client), "norights_")).rejects.toMatchObject({ code: "invalid_config", message: expect.stringContaining("may not change the tables") });
    } finally {
      await client.end();
      await db.query(`DROP OWNED BY ${role}`);
      await db.query(`DROP ROLE ${role}`);
    }
  });
});
