import type { Tables } from "../shared/tables.js";

/** A schedule's row as the code defines it: what a sync, a pause or a run-now creates it from. */
export interface ScheduleRowInput {
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly job_name: string;
  readonly payload: unknown;
  readonly missed: unknown;
  readonly definition_hash: string;
  /** ISO */
  readonly next_run_at: string;
}

/** The defined columns, in the order an insert lists them. */
const SCHEDULE_COLUMNS = ["name", "cron", "timezone", "job_name", "payload", "missed", "definition_hash", "next_run_at"] as const;

/** A record type for input rows carrying them (`jsonb_to_recordset(...) AS i(${SCHEDULE_RECORD})`), with `extra` typed columns after. */
export const scheduleRecord = (extra = ""): string =>
  `name text, cron text, timezone text, job_name text, payload jsonb, missed jsonb, definition_hash text, next_run_at timestamptz${extra}`;

/**
 * A CTE that makes the next tick sync the schedules table when `cte` (an insert's RETURNING `created`)
 * created a row. Only a sync creates rows but for pause, resume and run-now: code that defines a schedule
 * no tick has synced yet, or code of an older release acting on one a newer release removed. That row
 * would stay (a sync runs only when the code's set differs from the one recorded), due and never
 * advanced, and a later release adding the schedule back would take it over: its missed occurrences run
 * again, or it comes back paused. Forgetting the recorded set costs the next tick one sync.
 */
export const resyncIfCreated = (t: Tables, cte: string): string =>
  `resync AS (UPDATE ${t.state} SET schedules_hash = NULL WHERE id = 1 AND EXISTS (SELECT 1 FROM ${cte} WHERE created) RETURNING 1)`;

/**
 * The one insert of schedule rows: the defined columns (and `more`, name to expression) from the input
 * rows `json` (a jsonb parameter) as `i`, then `rest` (the ON CONFLICT and RETURNING of the caller).
 */
export const scheduleInsert = (t: Tables, json: string, rest: string, more: Readonly<Record<string, string>> = {}, extra = ""): string => {
  const columns = [...SCHEDULE_COLUMNS, ...Object.keys(more)];
  const values = [...SCHEDULE_COLUMNS.map((c) => `i.${c}`), ...Object.values(more)];
  return `INSERT INTO ${t.schedules} AS s (${columns.join(", ")})
      SELECT ${values.join(", ")}
      FROM jsonb_to_recordset(${json}) AS i(${scheduleRecord(extra)})
      ${rest}`;
};
