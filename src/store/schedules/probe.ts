import type { Tables } from "../shared/tables.js";

/** A due schedule as the probe reports it. */
export interface DueScheduleRow {
  readonly name: string;
  readonly definition_hash: string;
  /** next_run_at in epoch milliseconds. */
  readonly next_ms: number;
}

export const PROBE_COLUMNS = { hash: "schedules_hash", due: "schedules_due", now: "schedules_now_ms" } as const;

/** Most due schedules one tick handles; the rest are still due at the next tick. */
const DUE_LIMIT = 500;

/**
 * Columns added to the tick's first statement: the hash of the definitions last
 * synced, the due schedules (NULL when none, read through the partial index) and
 * the database clock. `nowIso` replaces now() when a clock is passed in; it comes
 * from Date#toISOString, so it is safe to splice.
 */
export const scheduleProbeColumns = (t: Tables, nowIso?: string): string[] => {
  const now = nowIso === undefined ? "now()" : `'${new Date(nowIso).toISOString()}'::timestamptz`;
  return [
    `(SELECT schedules_hash FROM ${t.state} WHERE id = 1) AS ${PROBE_COLUMNS.hash}`,
    `(SELECT jsonb_agg(jsonb_build_object('name', d.name, 'definition_hash', d.definition_hash,
        'next_ms', floor(extract(epoch FROM d.next_run_at) * 1000)::bigint))
      FROM (SELECT name, definition_hash, next_run_at FROM ${t.schedules}
            WHERE NOT paused AND next_run_at <= ${now} ORDER BY next_run_at, name LIMIT ${DUE_LIMIT}) d) AS ${PROBE_COLUMNS.due}`,
    `(extract(epoch FROM ${now}) * 1000)::float8 AS ${PROBE_COLUMNS.now}`,
  ];
};
