import type { Db } from "../../db.js";
import { Params, type Tables } from "../shared/tables.js";
import { type ScheduleRowInput, scheduleInsert, scheduleRecord } from "./row-insert.js";

export interface StoredScheduleRow {
  readonly name: string;
  readonly definition_hash: string;
  readonly paused: boolean;
  /** epoch ms */
  readonly next_ms: number;
}

/**
 * Every row's identity and position, and the database's time as it read them: what a sync needs to
 * decide what to write. That time, not the tick's first statement's, is where a sync may start a
 * schedule from: another tick may have handled an occurrence in between.
 */
export const readScheduleHeads = async (db: Db, t: Tables): Promise<{ nowMs: number; rows: StoredScheduleRow[] }> => {
  const { rows } = await db.query<StoredScheduleRow & { now_ms: number; name: string | null }>(
    `SELECT (extract(epoch FROM now()) * 1000)::float8 AS now_ms, s.name, s.definition_hash, s.paused,
            (extract(epoch FROM s.next_run_at) * 1000)::float8 AS next_ms
       FROM (SELECT 1) AS one LEFT JOIN ${t.schedules} s ON true`,
  );
  return { nowMs: Number(rows[0]!.now_ms), rows: rows.filter((r): r is typeof r & { name: string } => r.name !== null) };
};

export interface SyncWrite {
  /** Schedules with no row yet. */
  readonly insert: readonly ScheduleRowInput[];
  /** Changed schedules, each guarded by the hash and next_run_at the read saw. */
  readonly update: ReadonlyArray<ScheduleRowInput & { readonly seen_hash: string; readonly seen_next: string }>;
  /** Every name defined in code; any other row is deleted. */
  readonly keep: readonly string[];
  /** The set hash recorded when every insert and update above took effect. */
  readonly setHash: string;
}

export interface SyncResult {
  readonly inserted: number;
  readonly updated: number;
  readonly removed: number;
  /** False when a concurrent writer got in between; the next tick syncs again. */
  readonly recorded: boolean;
}

/**
 * One statement: insert new schedules, rewrite changed ones (pause state untouched),
 * delete removed ones, and record the set hash only if all of it applied.
 */
export const writeScheduleSync = async (db: Db, t: Tables, w: SyncWrite): Promise<SyncResult> => {
  const p = new Params();
  const inserts = p.json(w.insert);
  const updates = p.json(w.update);
  const text = `
    WITH removed AS (
      DELETE FROM ${t.schedules} s
      WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(${p.json(w.keep)}) k(name) WHERE k.name = s.name)
      RETURNING s.name),
    inserted AS (
      ${scheduleInsert(t, inserts, "ON CONFLICT (name) DO NOTHING RETURNING s.name")}),
    updated AS (
      UPDATE ${t.schedules} s
      SET cron = i.cron, timezone = i.timezone, job_name = i.job_name, payload = i.payload, missed = i.missed,
          definition_hash = i.definition_hash, next_run_at = i.next_run_at, updated_at = now()
      FROM jsonb_to_recordset(${updates}) AS i(${scheduleRecord(", seen_hash text, seen_next timestamptz")})
      WHERE s.name = i.name AND s.definition_hash = i.seen_hash AND s.next_run_at = i.seen_next
      RETURNING s.name),
    recorded AS (
      UPDATE ${t.state} SET schedules_hash = ${p.add(w.setHash)}::text
      WHERE id = 1 AND (SELECT count(*) FROM inserted) + (SELECT count(*) FROM updated) = ${p.add(w.insert.length + w.update.length)}::int
      RETURNING 1)
    SELECT (SELECT count(*) FROM inserted)::int AS inserted, (SELECT count(*) FROM updated)::int AS updated,
           (SELECT count(*) FROM removed)::int AS removed, EXISTS (SELECT 1 FROM recorded) AS recorded`;
  const { rows } = await db.query<SyncResult>(text, p.values);
  return rows[0]!;
};
