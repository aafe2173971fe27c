import type { Db } from "../../db.js";
import { isoSql } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

/** A cheap read that proves the database answers; says when a tick last ran and the migration its tables are at. */
export const readHealth = async (db: Db, t: Tables): Promise<{ lastTickAt: string | null; migration: number }> => {
  const { rows } = await db.query<{ last_tick_at: string | null; at: number | null }>(
    `SELECT ${isoSql("last_tick_at")} AS last_tick_at, (SELECT max(version)::int FROM ${t.migrations}) AS at FROM ${t.state} WHERE id = 1`,
  );
  return { lastTickAt: rows[0]?.last_tick_at ?? null, migration: rows[0]?.at ?? 0 };
};
