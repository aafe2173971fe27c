import type { Db } from "../../db.js";
import { isoSql } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

/**
 * A cheap read that proves the database answers; says when a tick last ran, the migration its tables are at,
 * and whether it takes writes (a standby or read replica answers reads, and fails every tick and enqueue).
 */
export const readHealth = async (db: Db, t: Tables): Promise<{ lastTickAt: string | null; migration: number; readOnly: boolean }> => {
  const { rows } = await db.query<{ last_tick_at: string | null; at: number | null; read_only: boolean }>(
    `SELECT ${isoSql("last_tick_at")} AS last_tick_at, (SELECT max(version)::int FROM ${t.migrations}) AS at,
            current_setting('transaction_read_only') = 'on' AS read_only FROM ${t.state} WHERE id = 1`,
  );
  return { lastTickAt: rows[0]?.last_tick_at ?? null, migration: rows[0]?.at ?? 0, readOnly: rows[0]?.read_only ?? false };
};
