import type { Db } from "../../db.js";
import type { Tables } from "../shared/tables.js";

export interface ScheduleStateRow {
  readonly name: string;
  readonly definition_hash: string;
  readonly paused: boolean;
  /** epoch ms */
  readonly next_ms: number;
  readonly last_enqueued_at: string | null;
  readonly last_job_id: string | null;
  readonly last_occurrence_at: string | null;
}

export const STATE_COLUMNS = (s: string) => `${s}.name, ${s}.definition_hash, ${s}.paused,
  (extract(epoch FROM ${s}.next_run_at) * 1000)::float8 AS next_ms,
  to_char(${s}.last_enqueued_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_enqueued_at,
  ${s}.last_job_id::text AS last_job_id,
  to_char(${s}.last_occurrence_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_occurrence_at`;

/** The stored state of the named schedules (a page of them): read by primary key, whatever the table holds. */
export const readScheduleStates = async (db: Db, t: Tables, names: readonly string[]): Promise<ScheduleStateRow[]> => {
  const { rows } = await db.query<ScheduleStateRow>(`SELECT ${STATE_COLUMNS("s")} FROM ${t.schedules} s WHERE s.name = ANY ($1::text[])`, [names]);
  return rows;
};
