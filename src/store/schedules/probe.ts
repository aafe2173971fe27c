import type { Db } from "../../db.js";
import { Params, type Tables } from "../shared/tables.js";

/** A due schedule as the probe reports it. */
export interface DueScheduleRow {
  readonly name: string;
  readonly definition_hash: string;
  /** next_run_at in epoch milliseconds. */
  readonly next_ms: number;
}

export const PROBE_COLUMNS = { hash: "schedules_hash", due: "schedules_due", now: "schedules_now_ms" } as const;

/** Most due schedules one read returns; a tick that read this many reads on after them (readDueSchedules). */
export const DUE_LIMIT = 500;

/**
 * Columns added to the tick's first statement: the hash of the definitions last
 * synced, the due schedules (NULL when none, read through the partial index) and
 * the database clock. `nowIso` replaces now() when a clock is passed in; it comes
 * from Date#toISOString, so it is safe to splice.
 */
export const scheduleProbeColumns = (t: Tables, nowIso?: string, after?: { p: Params; row: DueScheduleRow }): string[] => {
  const now = nowIso === undefined ? "now()" : `'${new Date(nowIso).toISOString()}'::timestamptz`;
  const past = after
    ? ` AND (next_run_at, name) > (timestamptz 'epoch' + ${after.p.add(Number(after.row.next_ms))}::bigint * interval '1 millisecond', ${after.p.add(after.row.name)}::text)`
    : "";
  return [
    `(SELECT schedules_hash FROM ${t.state} WHERE id = 1) AS ${PROBE_COLUMNS.hash}`,
    `(SELECT jsonb_agg(jsonb_build_object('name', d.name, 'definition_hash', d.definition_hash,
        'next_ms', floor(extract(epoch FROM d.next_run_at) * 1000)::bigint))
      FROM (SELECT name, definition_hash, next_run_at FROM ${t.schedules}
            WHERE NOT paused AND next_run_at <= ${now}${past} ORDER BY next_run_at, name LIMIT ${DUE_LIMIT}) d) AS ${PROBE_COLUMNS.due}`,
    `(extract(epoch FROM ${now}) * 1000)::float8 AS ${PROBE_COLUMNS.now}`,
  ];
};

/**
 * The due schedules after `after` (in the probe's order), in a statement of their own: a tick whose
 * probe found DUE_LIMIT of them handles the rest (it left them to the next tick, and with 2,000
 * schedules due each minute three in four occurrences were never run). Without `after`, all of them,
 * as a tick that has just synced them sees them.
 */
export const readDueSchedules = async (db: Db, t: Tables, after: DueScheduleRow | undefined, nowIso?: string): Promise<Record<string, unknown>> => {
  const p = new Params();
  const { rows } = await db.query<Record<string, unknown>>(`SELECT ${scheduleProbeColumns(t, nowIso, after && { p, row: after }).join(", ")}`, p.values);
  return rows[0] ?? {};
};
