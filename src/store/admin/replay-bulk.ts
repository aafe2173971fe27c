import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import { isUuid, textFilter } from "../shared/sql.js";
import { deadReasonFilter } from "./dead-letters-list.js";
import { isUniqueViolation, liveTwin, noLiveTwin, replayInsert } from "./replay.js";
import { COUNT_LIMIT } from "../shared/bounded.js";
import { Params, type Tables } from "../shared/tables.js";

export const MAX_BULK_REPLAY = 1_000;

/**
 * What is left for a next call, counted in the statement's snapshot (where the letters it deleted
 * are still seen): neither replayed now nor sharing a key with a letter replayed now, which holds
 * that key from then on, inside this call's selection or past it.
 */
const NOT_REPLAYED_NOR_HELD = `d.id NOT IN (SELECT id FROM gone)
  AND NOT EXISTS (SELECT 1 FROM gone g WHERE g.job_name = d.job_name AND g.idempotency_key = d.idempotency_key)`;

/** Which dead letters to replay: these ids, or the oldest `limit` matching a filter (a job, a reason, both). */
export type BulkReplaySelector =
  | { readonly ids: readonly string[] }
  | { readonly job?: string; readonly reason?: string; readonly limit?: number };

export interface BulkReplayResult {
  /** Ids now queued again (a dead letter keeps its job's id). */
  readonly replayed: string[];
  /** Ids not replayed: `not_found` (no such dead letter, or replayed meanwhile), `conflict` (a live job holds its id or key). */
  readonly skipped: Array<{ id: string; reason: "not_found" | "conflict" }>;
  /**
   * By filter: dead letters still matching after this call that a call could replay (call again to
   * continue), counted up to 10,000 (a count never reads more). Those whose id or key a live job holds
   * are passed over and not counted, so calls end.
   */
  readonly remaining: number;
}

/**
 * Replays many dead letters in ONE statement (delete + insert in a CTE). Dead
 * letters whose id or idempotency key a live job holds stay where they are; of
 * several with one key, only the newest is replayed.
 */
export const bulkReplay = async (db: Db, t: Tables, selector: BulkReplaySelector): Promise<BulkReplayResult> => {
  const p = new Params();
  let filter: string;
  let requested: string[] = [];
  let limit = MAX_BULK_REPLAY;
  if ("ids" in selector) {
    if (!Array.isArray(selector.ids) || selector.ids.length === 0 || selector.ids.length > MAX_BULK_REPLAY) {
      throw new JobsError("invalid_options", `ids must be a list of 1 to ${MAX_BULK_REPLAY} dead letter ids`, { field: "ids" });
    }
    requested = [...new Set(selector.ids.map((id) => (typeof id === "string" ? id.toLowerCase() : String(id))))];
    const valid = requested.filter(isUuid);
    filter = `d.id IN (SELECT (value #>> '{}')::uuid FROM jsonb_array_elements(${p.json(valid)}))`;
  } else {
    const job = textFilter(selector.job, "job");
    const reason = deadReasonFilter(selector.reason);
    if (job === "" || reason === "") throw new JobsError("invalid_options", "a filter must not be empty", { field: job === "" ? "job" : "reason" });
    if (selector.limit !== undefined) {
      if (!Number.isInteger(selector.limit) || selector.limit < 1 || selector.limit > MAX_BULK_REPLAY) {
        throw new JobsError("invalid_options", `limit must be an integer from 1 to ${MAX_BULK_REPLAY}`, { field: "limit" });
      }
      limit = selector.limit;
    }
    const conditions = [job !== undefined ? `d.job_name = ${p.add(job)}` : "", reason !== undefined ? `d.reason = ${p.add(reason)}` : ""];
    // Letters a live job blocks are passed over: else the oldest thousand, all blocked, came back on every call.
    filter = [...conditions.filter(Boolean), noLiveTwin(t, "d")].join(" AND ");
  }
  const byIds = "ids" in selector;
  try {
    const { rows } = await db.query<{ replayed: string[]; blocked: string[]; remaining: number }>(
      `WITH pick AS (
         SELECT d.id FROM ${t.deadLetters} d WHERE ${filter} ORDER BY d.dead_at, d.id LIMIT ${p.add(limit)}),
       -- Locked in id order, as a discard of many locks them (the tick's cleanup passes over held ones):
       -- in the plan's order, a replay by ids and one by filter crossing the same letters deadlocked. A
       -- letter replayed or discarded meanwhile is passed over (not_found).
       sel AS (
         SELECT d.id, d.job_name, d.idempotency_key, d.dead_at FROM ${t.deadLetters} d
         WHERE d.id IN (SELECT id FROM pick) ORDER BY d.id FOR UPDATE),
       blocked AS (
         SELECT s.id FROM sel s WHERE ${liveTwin(t, "s")}
         UNION
         SELECT r.id FROM (
           SELECT s.id, row_number() OVER (PARTITION BY s.job_name, s.idempotency_key ORDER BY s.dead_at DESC, s.id DESC) AS n
           FROM sel s WHERE s.idempotency_key IS NOT NULL) r
         WHERE r.n > 1),
       gone AS (
         DELETE FROM ${t.deadLetters} x USING sel
         WHERE x.id = sel.id AND sel.id NOT IN (SELECT id FROM blocked)
         RETURNING x.*),
       queued AS (${replayInsert(t)})
       SELECT coalesce((SELECT jsonb_agg(id::text) FROM queued), '[]'::jsonb) AS replayed,
              coalesce((SELECT jsonb_agg(id::text) FROM blocked), '[]'::jsonb) AS blocked,
              ${byIds ? "0" : `(SELECT count(*) FROM (SELECT 1 FROM ${t.deadLetters} d WHERE ${filter} AND ${NOT_REPLAYED_NOR_HELD} LIMIT ${p.add(COUNT_LIMIT)}) c)`}::int AS remaining`,
      p.values,
    );
    const row = rows[0] ?? { replayed: [], blocked: [], remaining: 0 };
    const replayed = new Set(row.replayed);
    const blocked = new Set(row.blocked);
    const skipped: BulkReplayResult["skipped"] = [...blocked].map((id) => ({ id, reason: "conflict" }));
    for (const id of requested) if (!replayed.has(id) && !blocked.has(id)) skipped.push({ id, reason: "not_found" });
    return { replayed: row.replayed, skipped, remaining: row.remaining };
  } catch (e) {
    if (isUniqueViolation(e)) {
      throw new JobsError("conflict", "a job with the same idempotency key was enqueued meanwhile; nothing was replayed, try again");
    }
    throw e;
  }
};
