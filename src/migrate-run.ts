// The migration runner, with the migrations it applies: what `#migrations` gives every runtime but a Worker
// (whose stand-in is migrations.elsewhere.ts), so that neither their SQL nor the runner is in a Worker's bundle.
import type { Db } from "./db.js";
import { JobsError, MigrationLocked } from "./errors.js";
import type { Migration } from "./migrate.js";
import { migrations } from "./migrations.generated.js";
import { tablesFor } from "./store/shared/tables.js";

// Unlikely to appear in a migration body; the body runs inside a DO block quoted with it.
const TAG = "$jobs_migration$";

/**
 * The longest the migration waits for any one table lock. Its transaction keeps every lock it took
 * until it commits, and the ticks of the running release take the same tables in another order (the
 * queue, then housekeeping): a migration that waited for a lock held by a backup or a slow statement
 * made every tick wait behind it, and could deadlock with one. Below the server's deadlock_timeout
 * (1 s by default), so the migration gives up first: it rolls back, freeing what it took, and retries.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 500;
/** The longest bound a migration takes: what a timer can wait (about 24.8 days). */
const MAX_TIMEOUT_MS = 2_147_483_647;
/** How long a migration keeps retrying for its locks before it fails. */
const MIGRATION_RETRY_FOR_MS = 120_000;
/** The longest one statement waits for another migrate() to finish; it is sent again until that one is done. */
const ADVISORY_WAIT_MS = 2_000;
/** The SQLSTATE a migration statement gives up with when another migrate() holds the lock (a class of our own). */
const ANOTHER_MIGRATE = "PT001";
/** The tables' bookkeeping is in another schema than the one this role creates in (its search_path). */
const OTHER_SCHEMA = "PT002";
/** The tables are in a schema this role's search_path does not reach. */
const UNREACHED_SCHEMA = "PT003";
/** lock_not_available (the lock timeout) and deadlock_detected: the migration rolled back and may run again. */
const RETRYABLE = new Set(["55P03", "40P01"]);

/**
 * Builds the whole migration as ONE statement: a DO block that takes a
 * transaction-scoped advisory lock (so two processes migrating at once run one
 * after the other), creates the bookkeeping table, and applies each migration
 * not yet recorded. One statement is atomic and needs no session, so it runs
 * the same over pg, Neon's Pool and Neon's HTTP driver.
 */
export const migrationStatement = (
  prefix: string,
  list: readonly Migration[] = migrations,
  runId = "00000000-0000-0000-0000-000000000000",
  /** The statement rolls back what it applied when it ends later than this after it started (see `migrate`'s timeoutMs). */
  withinMs?: number,
): string => {
  if (!/^[0-9a-f-]{36}$/.test(runId)) throw new Error("runId must be a uuid");
  const t = tablesFor(prefix);
  const lockKey = `hashtext('${prefix}migrate')`;
  const steps = list.map((m) => {
    const body = m.sql.replaceAll("{{prefix}}", prefix);
    if (body.includes(TAG)) throw new Error(`migration ${m.version} contains ${TAG}`);
    return `
  IF NOT EXISTS (SELECT 1 FROM ${t.migrations} WHERE version = ${m.version}) THEN
${body}
    INSERT INTO ${t.migrations} (version, name, run_id) VALUES (${m.version}, '${m.name.replaceAll("'", "''")}', '${runId}');
    applied := applied + 1;
  END IF;`;
  });
  // Another migrate() holds the advisory lock as long as its migrations take: waited for in turns of
  // ADVISORY_WAIT_MS, so that a caller gone meanwhile (a Ctrl-C) leaves no statement waiting to apply its
  // migrations whenever the lock frees; then each table lock is waited for at most MIGRATION_LOCK_TIMEOUT_MS.
  // Tables found through search_path in another schema than the one new tables go to (a role's own schema
  // first, PostgreSQL 15's advice) are refused: creating them here would start a second, empty queue. The
  // bookkeeping table is created only when missing: CREATE ... IF NOT EXISTS asks for the right to create
  // even when the table is there. Its run_id says which migrate() call applied a migration.
  return `DO ${TAG}
DECLARE applied integer := 0;
BEGIN
  BEGIN
    -- Within the role's statement_timeout (half of it, when shorter): a turn that outlasted it ended the whole
    -- migrate with a cancel, where it should wait for the other migrate's end.
    PERFORM set_config('lock_timeout', (SELECT CASE WHEN s.setting::bigint > 0 THEN greatest(1, least(${ADVISORY_WAIT_MS}, s.setting::bigint / 2)) ELSE ${ADVISORY_WAIT_MS} END
                                        FROM pg_settings s WHERE s.name = 'statement_timeout')::text || 'ms', true);
    PERFORM pg_advisory_xact_lock(${lockKey});
  EXCEPTION WHEN lock_not_available THEN
    RAISE EXCEPTION 'another migrate is applying migrations' USING ERRCODE = '${ANOTHER_MIGRATE}';
  END;
  PERFORM set_config('lock_timeout', '${MIGRATION_LOCK_TIMEOUT_MS}ms', true);
  -- Nothing pending: nothing to do, wherever the tables are (a role of its own schema, with the tables further on
  -- its search_path, was refused though it would create nothing). Nested: the inner test is planned only once the
  -- table is known to exist.
  IF to_regclass('${t.migrations}') IS NOT NULL THEN
    IF NOT EXISTS (SELECT 1 FROM unnest(ARRAY[${list.map((m) => m.version).join(", ") || "NULL"}]::int[]) v
                   WHERE v IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${t.migrations} m WHERE m.version = v)) THEN
      RETURN;
    END IF;
  END IF;
  -- No such tables on the search_path, but in a schema it does not reach: creating them here would start a second,
  -- empty queue (a role whose search_path leaves out the owner's schema did).
  IF to_regclass('${t.migrations}') IS NULL AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relname = '${prefix}migrations' AND c.relkind = 'r') THEN
    RAISE EXCEPTION '%', (SELECT json_build_array(n.nspname, coalesce(current_schema(), '(none)')) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = '${prefix}migrations' AND c.relkind = 'r' ORDER BY n.nspname LIMIT 1) USING ERRCODE = '${UNREACHED_SCHEMA}';
  END IF;
  IF to_regclass('${t.migrations}') IS NOT NULL AND (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.oid = to_regclass('${t.migrations}')) IS DISTINCT FROM current_schema() THEN
    RAISE EXCEPTION '%', (SELECT json_build_array(n.nspname, coalesce(current_schema(), '(none)')) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.oid = to_regclass('${t.migrations}')) USING ERRCODE = '${OTHER_SCHEMA}';
  END IF;
  IF to_regclass('${t.migrations}') IS NULL THEN
    CREATE TABLE ${t.migrations} (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      run_id uuid
    );
  END IF;
${steps.join("\n")}${withinMs === undefined ? "" : `
  -- Its caller gave up at its bound: what it applied must not commit later (a single Client's statement is not cancelled).
  IF clock_timestamp() > statement_timestamp() + interval '${Math.floor(withinMs)} milliseconds' THEN
    RAISE EXCEPTION 'the migration ended after its bound of ${Math.floor(withinMs)} ms: rolled back' USING ERRCODE = '57014';
  END IF;`}
END
${TAG}`;
};

/**
 * Applies every pending migration under `prefix`; returns the versions applied by this call. With
 * `timeoutMs`, a statement the database does not answer within it is given up (cancelled: its one
 * transaction applies nothing) with `StatementTimeout`; without, it is waited for.
 */
export const migrate = async (
  db: Db,
  prefix: string,
  list: readonly Migration[] = migrations,
  retryForMs = MIGRATION_RETRY_FOR_MS,
  timeoutMs?: number,
): Promise<number[]> => {
  const t = tablesFor(prefix);
  if (timeoutMs !== undefined && !(Number.isSafeInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= MAX_TIMEOUT_MS)) {
    throw new JobsError("invalid_options", `timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`, { field: "timeoutMs" });
  }
  const runId = crypto.randomUUID();
  let until = Date.now() + retryForMs;
  for (let pause = 100; ; pause = Math.min(pause * 2, 2_000)) {
    try {
      await db.query(migrationStatement(prefix, list, runId, timeoutMs), [], timeoutMs === undefined ? {} : { timeoutMs });
      break;
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      // Another migrate() is at work: wait for it however long it takes, as for the lock itself.
      if (code === ANOTHER_MIGRATE) {
        until = Date.now() + retryForMs;
        continue;
      }
      if (code === OTHER_SCHEMA) {
        const [found, current] = JSON.parse(String((e as Error).message)) as [string, string];
        throw new JobsError(
          "invalid_config",
          `the tables ${prefix}* are in schema ${found}, but this role creates tables in schema ${current} (the first of its search_path): ` +
            `migrating would start a second, empty queue there. Put ${found} first in its search_path, or migrate as the role that owns the tables`,
          { schema: found, currentSchema: current },
        );
      }
      if (code === UNREACHED_SCHEMA) {
        const [found, current] = JSON.parse(String((e as Error).message)) as [string, string];
        throw new JobsError(
          "invalid_config",
          `the tables ${prefix}* are in schema ${found}, which this role's search_path does not reach: migrating would start a second, ` +
            `empty queue in schema ${current}. Add ${found} to its search_path (ALTER ROLE ... SET search_path), or use another prefix for another queue`,
          { schema: found, currentSchema: current },
        );
      }
      // insufficient_privilege: a role that may use the tables but not change them (as it should be, at run time).
      if (code === "42501") {
        throw new JobsError(
          "invalid_config",
          `this database role may not change the tables ${prefix}* (${(e as Error).message}): run the migrations as the role that owns them (\`pgtick migrate\` or npm run migrate:deploy with its DATABASE_URL)`,
          { cause: (e as Error).message },
        );
      }
      if (typeof code !== "string" || !RETRYABLE.has(code)) throw e;
      // Jittered, so that the ticks waiting behind the lock it gave up get through first.
      const wait = pause / 2 + Math.random() * (pause / 2);
      if (Date.now() + wait >= until) {
        throw new MigrationLocked(retryForMs, MIGRATION_LOCK_TIMEOUT_MS);
      }
      await new Promise((done) => setTimeout(done, wait));
    }
  }
  const mine = await db.query<{ version: number }>(`SELECT version FROM ${t.migrations} WHERE run_id = $1 ORDER BY version`, [runId], timeoutMs === undefined ? {} : { timeoutMs });
  return mine.rows.map((r) => r.version);
};
