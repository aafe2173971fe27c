// Code deployed before its migrations ran meets tables without the columns, tables or functions it
// uses, and PostgreSQL says so in its own words (column "metrics_folded_until" does not exist). A
// statement failing so is followed by one look at the migrations table: when the database is behind
// this release, the error says that and what to run.
import type { Db } from "./db.js";
import { JobsError } from "./errors.js";
import { LATEST_MIGRATION } from "./migrations.latest.js";
import type { Tables } from "./store/shared/tables.js";

/** undefined_column, undefined_table, undefined_function, check_violation (a value an older constraint does not list): what a schema older than the code gives. */
const SCHEMA_MISSES = new Set(["42703", "42P01", "42883", "23514"]);

const codeOf = (e: unknown): unknown => (e as { code?: unknown } | null)?.code;

/** The migration the database's tables are at (0: none), or undefined when that cannot be read. */
const appliedUpTo = async (db: Db, t: Tables): Promise<number | undefined> => {
  try {
    const { rows } = await db.query<{ v: number | null }>(`SELECT max(version)::int AS v FROM ${t.migrations}`);
    return rows[0]?.v ?? 0;
  } catch (e) {
    return codeOf(e) === "42P01" ? 0 : undefined;
  }
};

/** `db`, whose statements that fail on a schema behind this release throw `invalid_config` saying so. */
export const schemaChecked = (db: Db, t: Tables): Db => ({
  statementsAtOnce: db.statementsAtOnce,
  async query(text, params, options) {
    try {
      return await db.query(text, params, options);
    } catch (e) {
      if (!SCHEMA_MISSES.has(codeOf(e) as string)) throw e;
      const at = await appliedUpTo(db, t);
      if (at === undefined || at >= LATEST_MIGRATION) throw e;
      throw new JobsError(
        "invalid_config",
        at === 0
          ? `the tables ${t.prefix}* do not exist yet: run \`pgtick migrate\` first (or jobs.migrate())`
          : `the database's tables are at migration ${at} and this release needs ${LATEST_MIGRATION}: run \`pgtick migrate\` (npm run migrate:deploy) before this release starts`,
        { migration: at, needs: LATEST_MIGRATION, cause: (e as Error).message },
      );
    }
  },
});
