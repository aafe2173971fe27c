import type { Db } from "../../db.js";
import { STATE_COLUMNS, type ScheduleStateRow } from "./states.js";
import { resyncIfCreated, type ScheduleRowInput, scheduleInsert } from "./row-insert.js";
import { Params, type Tables } from "../shared/tables.js";

/**
 * Pauses or resumes one schedule in one statement. The row is created from the
 * code's definition if no tick has synced it yet (and the next tick syncs: see resyncIfCreated). Resuming a paused schedule
 * restarts it from `row.next_run_at` (the first occurrence after now), so the
 * occurrences passed while paused are not run; resuming a running one changes nothing.
 */
export const setSchedulePaused = async (db: Db, t: Tables, row: ScheduleRowInput, paused: boolean): Promise<ScheduleStateRow> => {
  const p = new Params();
  const text = `
    WITH upserted AS (
      ${scheduleInsert(t, p.json([row]), `ON CONFLICT (name) DO UPDATE SET
        paused = excluded.paused,
        next_run_at = CASE WHEN s.paused AND NOT excluded.paused THEN excluded.next_run_at ELSE s.next_run_at END,
        updated_at = now()`, { paused: `${p.add(paused)}::boolean` })}
      RETURNING s.*, s.xmax = 0 AS created),
    ${resyncIfCreated(t, "upserted")}
    SELECT ${STATE_COLUMNS("u")} FROM upserted u`;
  const { rows } = await db.query<ScheduleStateRow>(text, p.values);
  return rows[0]!;
};
