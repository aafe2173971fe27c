import type { Db } from "../../db.js";
import { isoSql } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

/** A cheap read that proves the database answers and the schema is there; says when a tick last ran. */
export const readHealth = async (db: Db, t: Tables): Promise<{ lastTickAt: string | null }> => {
  const { rows } = await db.query<{ last_tick_at: string | null }>(`SELECT ${isoSql("last_tick_at")} AS last_tick_at FROM ${t.state} WHERE id = 1`);
  return { lastTickAt: rows[0]?.last_tick_at ?? null };
};
