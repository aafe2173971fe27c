import type { Db } from "../../db.js";
import { schemaBehind } from "../../migrate.js";
import { LATEST_MIGRATION } from "../../migrations.latest.js";
import { isoSql } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

/**
 * A cheap read that proves the database answers and its tables are this release's (a release deployed
 * before its migrations ran is not healthy: its ticks refuse to run); says when a tick last ran.
 */
export const readHealth = async (db: Db, t: Tables): Promise<{ lastTickAt: string | null }> => {
  const { rows } = await db.query<{ last_tick_at: string | null; at: number | null }>(
    `SELECT ${isoSql("last_tick_at")} AS last_tick_at, (SELECT max(version)::int FROM ${t.migrations}) AS at FROM ${t.state} WHERE id = 1`,
  );
  const at = rows[0]?.at ?? 0;
  if (at < LATEST_MIGRATION) throw schemaBehind(t.prefix, at);
  return { lastTickAt: rows[0]?.last_tick_at ?? null };
};
