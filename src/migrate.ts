import type { Db } from "./db.js";
import { JobsError } from "./errors.js";
import { migrations as shipped } from "#migrations";
import { tablesFor } from "./store/shared/tables.js";

export interface Migration {
  readonly version: number;
  readonly name: string;
  /** SQL with `{{prefix}}` where table names start. */
  readonly sql: string;
}

// Unlikely to appear in a migration body; the body runs inside a DO block quoted with it.
const TAG = "$jobs_migration$";

/**
 * Builds the whole migration as ONE statement: a DO block that takes a
 * transaction-scoped advisory lock (so two processes migrating at once run one
 * after the other), creates the bookkeeping table, and applies each migration
 * not yet recorded. One statement is atomic and needs no session, so it runs
 * the same over pg, Neon's Pool and Neon's HTTP driver.
 */
/** The migrations this build carries; a Worker's carries none (they run from Node before a deploy). */
const bundled = (): readonly Migration[] => {
  if (shipped) return shipped;
  throw new JobsError(
    "invalid_config",
    "migrations do not run inside a Cloudflare Worker: run `npm run migrate:deploy` (or `pgtick migrate`) from Node before deploying",
  );
};

export const migrationStatement = (prefix: string, list: readonly Migration[] = bundled(), runId = "00000000-0000-0000-0000-000000000000"): string => {
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
  return `DO ${TAG}
DECLARE applied integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(${lockKey});
  CREATE TABLE IF NOT EXISTS ${t.migrations} (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    -- Which migrate() call applied it, so each caller can tell what it did.
    run_id uuid
  );
${steps.join("\n")}
END
${TAG}`;
};

/** Applies every pending migration under `prefix`; returns the versions applied by this call. */
export const migrate = async (db: Db, prefix: string, list: readonly Migration[] = bundled()): Promise<number[]> => {
  const t = tablesFor(prefix);
  const runId = crypto.randomUUID();
  await db.query(migrationStatement(prefix, list, runId));
  const mine = await db.query<{ version: number }>(`SELECT version FROM ${t.migrations} WHERE run_id = $1 ORDER BY version`, [runId]);
  return mine.rows.map((r) => r.version);
};

export const appliedVersions = async (db: Db, prefix: string): Promise<number[]> => {
  const t = tablesFor(prefix);
  const exists = await db.query<{ r: string | null }>(`SELECT to_regclass('${t.migrations}')::text AS r`);
  if (!exists.rows[0]?.r) return [];
  const applied = await db.query<{ version: number }>(`SELECT version FROM ${t.migrations} ORDER BY version`);
  return applied.rows.map((r) => r.version);
};
