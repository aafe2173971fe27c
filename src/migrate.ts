import type { Db } from "./db.js";
import { JobsError } from "./errors.js";
import { LATEST_MIGRATION } from "./migrations.latest.js";
import { tablesFor } from "./store/shared/tables.js";

/**
 * The runner (`migrate`, `migrationStatement`) and the migrations come through `#migrations`: in a Worker
 * its `workerd` condition gives stand-ins that say migrations run from Node, and the bundle carries neither.
 */
export { migrate, migrationStatement } from "#migrations";
export { LATEST_MIGRATION };

export interface Migration {
  readonly version: number;
  readonly name: string;
  /** SQL with `{{prefix}}` where table names start. */
  readonly sql: string;
}

export const appliedVersions = async (db: Db, prefix: string): Promise<number[]> => {
  const t = tablesFor(prefix);
  const exists = await db.query<{ r: string | null }>(`SELECT to_regclass('${t.migrations}')::text AS r`);
  if (!exists.rows[0]?.r) return [];
  const applied = await db.query<{ version: number }>(`SELECT version FROM ${t.migrations} ORDER BY version`);
  return applied.rows.map((r) => r.version);
};

// Code deployed before its migrations ran meets tables without the columns, tables or functions it
// uses, and PostgreSQL says so in its own words (column "metrics_folded_until" does not exist). A
// statement failing so is followed by one look at the migrations table: when the database is behind
// this release, the error says that and what to run.
/** undefined_column, undefined_table, undefined_function, check_violation (a value an older constraint does not list): what a schema older than the code gives. */
const SCHEMA_MISSES = new Set(["42703", "42P01", "42883", "23514"]);

const codeOf = (e: unknown): unknown => (e as { code?: unknown } | null)?.code;

/**
 * The migration the database's tables are at (0: none), undefined when that cannot be read, or
 * "unread" when the failed statement was in a caller's transaction, which it aborted (25P02).
 */
const appliedUpTo = async (db: Db, t: ReturnType<typeof tablesFor>): Promise<number | "unread" | undefined> => {
  try {
    const { rows } = await db.query<{ v: number | null }>(`SELECT max(version)::int AS v FROM ${t.migrations}`);
    return rows[0]?.v ?? 0;
  } catch (e) {
    return codeOf(e) === "42P01" ? 0 : codeOf(e) === "25P02" ? "unread" : undefined;
  }
};

/** A missing table of ours, named in PostgreSQL's message: whatever the migration, the tables are behind. */
const ourTableMissing = (e: unknown, prefix: string): boolean =>
  codeOf(e) === "42P01" && String((e as Error).message).includes(`"${prefix}`);

/** What code meets on tables behind it: `invalid_config`, saying what to run. */
export const schemaBehind = (prefix: string, at: number, cause?: string): JobsError =>
  new JobsError(
    "invalid_config",
    at === 0
      ? `the tables ${prefix}* do not exist yet: run \`pgtick migrate\` first (or jobs.migrate())`
      : `the database's tables are at migration ${at} and this release needs ${LATEST_MIGRATION}: run \`pgtick migrate\` (npm run migrate:deploy) before this release starts`,
    { migration: at, needs: LATEST_MIGRATION, ...(cause === undefined ? {} : { cause }) },
  );

/** `db`, whose statements that fail on a schema behind this release throw `invalid_config` saying so. */
export const schemaChecked = (db: Db, prefix: string): Db => {
  const t = tablesFor(prefix);
  const query: Db["query"] = async (text, params, options) => {
    try {
      return await db.query(text, params, options);
    } catch (e) {
      if (!SCHEMA_MISSES.has(codeOf(e) as string)) throw e;
      const at = await appliedUpTo(db, t);
      if (at === "unread") {
        if (!ourTableMissing(e, t.prefix)) throw e;
        throw new JobsError("invalid_config", `a table this release needs does not exist (${(e as Error).message}): run \`pgtick migrate\` first (or jobs.migrate())`, {
          needs: LATEST_MIGRATION, cause: (e as Error).message,
        });
      }
      if (at === undefined || at >= LATEST_MIGRATION) throw e;
      throw schemaBehind(t.prefix, at, (e as Error).message);
    }
  };
  return { query, statementsAtOnce: db.statementsAtOnce, maxResultBytes: db.maxResultBytes };
};
