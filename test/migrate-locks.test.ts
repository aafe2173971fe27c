// A migration applied while the last release's ticks run: its transaction keeps each lock it takes
// until it commits, and a tick takes the same tables in another order (the queue, then
// housekeeping). It waits for no lock longer than MIGRATION_LOCK_TIMEOUT_MS, rolls back what it
// took and retries: no deadlock, and no tick stuck behind a migration that waits on someone else.
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { fromPg } from "../src/index.js";
import { migrate } from "../src/migrate.js";
import { migrations } from "../src/migrations.generated.js";
import { freshDatabase } from "./support/db.js";

const database = await freshDatabase("migrate_locks");
const pool = new pg.Pool({ connectionString: database.url, max: 4 });
pool.on("error", () => {});
afterAll(async () => {
  await pool.end();
  await database.drop();
});
const db = fromPg(pool);
const RELEASE = 17;

it("gives way to a tick holding the queue and waiting for housekeeping, then applies once it is through", async () => {
  await migrate(db, "dl_", migrations.filter((m) => m.version <= RELEASE));
  const tick = await pool.connect();
  try {
    // What the last release's final statement takes: the queue (its settle), then housekeeping (its cleanup).
    await tick.query("BEGIN");
    await tick.query("LOCK TABLE dl_queue IN ROW EXCLUSIVE MODE");
    const applying = migrate(db, "dl_", migrations);
    // The migration takes housekeeping (018) and waits for the queue (019's index).
    await waitFor(async () => (await pool.query(`SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'dl_queue' AND NOT l.granted`)).rowCount! > 0);
    // Before, the two waited on each other until the server's deadlock check killed one of them.
    await tick.query("LOCK TABLE dl_housekeeping IN ROW EXCLUSIVE MODE");
    await tick.query("COMMIT");
    expect(await applying).toEqual(migrations.filter((m) => m.version > RELEASE).map((m) => m.version));
  } finally {
    tick.release();
  }
});

it("fails with MigrationLocked, having applied nothing, when a long transaction keeps a table past its retries", async () => {
  await migrate(db, "ml_", migrations.filter((m) => m.version <= RELEASE));
  const backup = await pool.connect();
  try {
    await backup.query("BEGIN");
    await backup.query("LOCK TABLE ml_housekeeping IN ACCESS SHARE MODE");
    const failed = await migrate(db, "ml_", migrations, 1_500).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Error);
    // While it retried, other statements got through between its waits: the queue was never held for long.
    expect((await pool.query(`SELECT max(version) AS v FROM ml_migrations`)).rows[0].v).toBe(RELEASE);
    await backup.query("COMMIT");
    expect(await migrate(db, "ml_", migrations)).toEqual(migrations.filter((m) => m.version > RELEASE).map((m) => m.version));
  } finally {
    backup.release();
  }
});

const waitFor = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("the migration never waited for the queue");
};

it("says a database behind this release is behind, and what to run, instead of PostgreSQL's missing column", async () => {
  const { createJobs, defineJob, isJobsError, silentLogger } = await import("../src/index.js");
  const { z } = await import("zod");
  await migrate(db, "bh_", migrations.filter((m) => m.version <= RELEASE));
  const job = defineJob({ name: "ok", schema: z.object({}), handler: () => {} });
  const jobs = createJobs({ db: pool, jobs: [job], settings: { tablePrefix: "bh_" }, logger: silentLogger });
  // A plain enqueue works on tables a few migrations behind (a deploy that starts before its migration has run).
  const { id } = await jobs.enqueue("ok", {});
  // 020's outcome and 018's column are what this release's cancel and tick need, 026's column what a debounce does.
  for (const attempt of [() => jobs.cancel(id), () => jobs.tick({ budgetMs: 5_000 }), () => jobs.enqueue("ok", {}, { debounce: { key: "k", delayMs: 0 } })]) {
    const e = await attempt().catch((x: unknown) => x);
    expect(isJobsError(e) && e.code).toBe("invalid_config");
    expect((e as Error).message).toMatch(new RegExp(`at migration ${RELEASE} and this release needs ${migrations.at(-1)!.version}: run \`pgtick migrate\``));
  }
  const none = createJobs({ db: pool, jobs: [job], settings: { tablePrefix: "never_" }, logger: silentLogger });
  await expect(none.enqueue("ok", {})).rejects.toThrow(/the tables never_\* do not exist yet: run `pgtick migrate` first/);
  // A tick says it once, promising no retry: it logged two failures, each with the wait before a retry that never came.
  const { jsonLogger } = await import("../src/index.js");
  const lines: Array<{ level: string; msg: string; retryInMs?: number }> = [];
  const logged = createJobs({ db: pool, jobs: [job], settings: { tablePrefix: "never_" }, logger: jsonLogger("debug", (l) => lines.push(JSON.parse(l))) });
  await expect(logged.tick({ budgetMs: 5_000 })).rejects.toThrow(/do not exist yet/);
  expect(lines.filter((l) => l.msg === "tick statement failed")).toEqual([expect.not.objectContaining({ retryInMs: expect.anything() })]);
  // In the caller's transaction, which the failed statement aborted, so the migrations cannot be read.
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const e = await none.enqueue("ok", {}, { db: client }).catch((x: unknown) => x);
    expect(isJobsError(e) && e.code).toBe("invalid_config");
    expect((e as Error).message).toMatch(/a table this release needs does not exist \(relation "never_queue" does not exist\): run `pgtick migrate` first/);
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
  // Once migrated, the same calls work.
  await migrate(db, "bh_", migrations);
  expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ claimed: expect.any(Number) });
});

it("a tick on tables a few migrations behind fails, saying so, and so does the health check (the tick's give-back, which those tables take, had it end as if all was well)", async () => {
  const { createJobs, defineJob, isJobsError, silentLogger } = await import("../src/index.js");
  const { z } = await import("zod");
  // 014: the claim needs later ones, the final statement's give-back does not.
  await migrate(db, "b14_", migrations.filter((m) => m.version <= 14));
  const ran: string[] = [];
  const job = defineJob({ name: "ok", schema: z.object({}), handler: () => void ran.push("ok") });
  const jobs = createJobs({ db: pool, jobs: [job], settings: { tablePrefix: "b14_" }, logger: silentLogger });
  await pool.query(`INSERT INTO b14_queue (id, job_name, payload) VALUES (gen_random_uuid(), 'ok', '{}')`);
  for (const attempt of [() => jobs.tick({ budgetMs: 5_000 }), () => jobs.health()]) {
    const e = await attempt().catch((x: unknown) => x);
    expect(isJobsError(e) && e.code).toBe("invalid_config");
    expect((e as Error).message).toMatch(new RegExp(`at migration 14 and this release needs ${migrations.at(-1)!.version}`));
  }
  expect(ran).toEqual([]);
  await migrate(db, "b14_", migrations);
  expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1 });
  expect(await jobs.health()).toMatchObject({ ok: true });
});

it("applies nothing for a migrate interrupted while it waits for another's lock (it applied everything once the lock freed)", async () => {
  const { spawn } = await import("node:child_process");
  const { FROM_SOURCE, isolatedEnv } = await import("./support/isolated-env.js");
  await migrate(db, "ci_", migrations.filter((m) => m.version <= 3));
  const other = await pool.connect();
  try {
    // Another migrate, as far as the lock is concerned.
    await other.query("BEGIN");
    await other.query(`SELECT pg_advisory_xact_lock(hashtext('ci_migrate'))`);
    const cli = spawn(process.execPath, [...FROM_SOURCE, "src/cli/pgtick.ts", "migrate"], {
      cwd: new URL("..", import.meta.url).pathname,
      env: isolatedEnv({ DATABASE_URL: database.url, JOBS_TABLE_PREFIX: "ci_" }),
      stdio: "ignore",
    });
    const exited = new Promise((done) => cli.once("exit", done));
    await until(async () => (await pool.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rowCount! > 0);
    cli.kill("SIGINT");
    await exited;
    // The server finds the client gone within its check interval and ends the waiting statement.
    await until(async () => (await pool.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rowCount === 0);
    await other.query("COMMIT");
  } finally {
    other.release();
  }
  await new Promise((r) => setTimeout(r, 300));
  expect((await pool.query<{ v: number }>(`SELECT max(version)::int AS v FROM ci_migrations`)).rows[0]!.v).toBe(3);
  // A migrate that stays waits for another's as long as that one takes (here past two turns of its wait).
  const longer = await pool.connect();
  try {
    await longer.query("BEGIN");
    await longer.query(`SELECT pg_advisory_xact_lock(hashtext('ci_migrate'))`);
    const applying = migrate(db, "ci_", migrations);
    await new Promise((r) => setTimeout(r, 4_500));
    await longer.query("COMMIT");
    expect(await applying).toEqual(migrations.filter((m) => m.version > 3).map((m) => m.version));
  } finally {
    longer.release();
  }
});

/** Polls for up to 20 s: a CLI takes a few seconds to start. */
const until = async (check: () => Promise<boolean>) => {
  for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (await check()) return;
  throw new Error("timed out");
};

it("a tick on tables behind only by a rewritten function takes no slot, claims nothing and fails saying so (it ran on the last release's admission)", async () => {
  const { createJobs, defineJob, isJobsError, silentLogger } = await import("../src/index.js");
  const { z } = await import("zod");
  // The newest migrations only rewrite flow_admit: no statement of this release fails on the tables before them.
  const latest = migrations.at(-1)!.version;
  const before = migrations.filter((m) => m.version < latest).at(-1)!.version;
  await migrate(db, "fn_", migrations.filter((m) => m.version <= before));
  const ran: string[] = [];
  const job = defineJob({ name: "ok", schema: z.object({}), handler: () => void ran.push("ok") });
  const jobs = createJobs({ db: pool, jobs: [job], settings: { tablePrefix: "fn_" }, logger: silentLogger });
  const { id } = await jobs.enqueue("ok", {});
  const e = await jobs.tick({ budgetMs: 5_000 }).catch((x: unknown) => x);
  expect(isJobsError(e) && e.code).toBe("invalid_config");
  expect((e as Error).message).toMatch(new RegExp(`at migration ${before} and this release needs ${latest}: run \`pgtick migrate\``));
  expect(ran).toEqual([]);
  expect((await pool.query(`SELECT status, attempt FROM fn_queue WHERE id = $1`, [id])).rows).toEqual([{ status: "queued", attempt: 0 }]);
  expect((await pool.query(`SELECT count(*)::int AS n FROM fn_ticks WHERE expires_at > now()`)).rows).toEqual([{ n: 0 }]);
  await migrate(db, "fn_", migrations);
  expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1 });
  expect(ran).toEqual(["ok"]);
});

it("a handler's own statements keep their errors whatever the migrations table says (they read as pgtick's 'run pgtick migrate')", async () => {
  const { createJobs, defineJob, silentLogger } = await import("../src/index.js");
  const { z } = await import("zod");
  await migrate(db, "own_", migrations);
  await pool.query(`DROP TABLE IF EXISTS own_app_orders; CREATE TABLE own_app_orders (qty int CHECK (qty > 0))`);
  const sql: Record<string, string> = {
    check: "INSERT INTO own_app_orders (qty) VALUES (-1)",
    column: "SELECT nope FROM own_app_orders",
    table: "SELECT 1 FROM own_app_missing",
  };
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const started: string[] = [];
  const job = defineJob({
    name: "own",
    schema: z.object({ k: z.string() }),
    maxAttempts: 1,
    handler: async ({ k }, ctx) => {
      started.push(k);
      await gate;
      await ctx.db.query(sql[k]!);
    },
  });
  const jobs = createJobs({ db: pool, jobs: [job], settings: { tablePrefix: "own_" }, logger: silentLogger });
  for (const k of Object.keys(sql)) await jobs.enqueue("own", { k });
  const tick = jobs.tick({ budgetMs: 10_000 });
  await expect.poll(() => started.length, { timeout: 5_000 }).toBe(3);
  // The migrations table reads as behind while the handlers' statements fail (a release rolled back under them, say).
  const top = (await pool.query<{ version: number; name: string }>(`DELETE FROM own_migrations WHERE version = (SELECT max(version) FROM own_migrations) RETURNING version, name`)).rows[0]!;
  try {
    release();
    expect(await tick).toMatchObject({ deadLettered: 3 });
  } finally {
    await pool.query(`INSERT INTO own_migrations (version, name) VALUES ($1, $2)`, [top.version, top.name]);
  }
  const errors = (await pool.query<{ error: string }>(`SELECT last_error AS error FROM own_dead_letters ORDER BY last_error`)).rows.map((r) => r.error);
  expect(errors).toHaveLength(3);
  for (const error of errors) expect(error).not.toMatch(/pgtick migrate/);
  expect(errors.join("\n")).toMatch(/violates check constraint/);
  expect(errors.join("\n")).toMatch(/column "nope" does not exist/);
  expect(errors.join("\n")).toMatch(/relation "own_app_missing" does not exist/);
});

it("waits its turn behind another migrate within a role's statement_timeout shorter than a turn (the cancel ended it)", async () => {
  const other = await pool.connect();
  const short = new pg.Client({ connectionString: database.url });
  await short.connect();
  try {
    // All but the last applied already: what is left takes the 1 s easily, the waiting is what is tested.
    await migrate(db, "st_", migrations.slice(0, -1));
    await short.query(`SET statement_timeout = '1s'`);
    // Another migrate holds the lock for 2.5 s: turns of 2 s each outlasted the role's 1 s.
    await other.query("BEGIN");
    await other.query(`SELECT pg_advisory_xact_lock(hashtext('st_migrate'))`);
    const release = setTimeout(() => void other.query("COMMIT"), 2_500);
    try {
      expect(await migrate(fromPg(short), "st_")).toEqual([migrations.at(-1)!.version]);
    } finally {
      clearTimeout(release);
    }
  } finally {
    await other.query("COMMIT").catch(() => undefined);
    other.release();
    await short.end();
  }
});
