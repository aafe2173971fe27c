import type { Db } from "../../db.js";
import { runInsert } from "../shared/run-insert.js";
import { isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

export type CancelOutcome = "cancelled" | "running" | "not_found";

/**
 * Deletes a queued job and, with `history`, records the cancel as a run (outcome `cancelled`, the
 * payload kept so it can be run again), so that reading the job says it was cancelled. A running job
 * is not touched (its tick owns it until it settles): the outcome says `running`, which the API answers
 * with 409. One statement: the row is read under its lock, so the answer is about the row as it is
 * once any write racing this one has committed (a claim that won: running; another cancel: not found).
 */
export const cancelJob = async (db: Db, t: Tables, id: string, history = true): Promise<CancelOutcome> => {
  if (!isUuid(id)) return "not_found";
  const { rows } = await db.query<{ seen: string | null; deleted: boolean }>(
    `WITH seen AS MATERIALIZED (SELECT id, status FROM ${t.queue} WHERE id = $1::uuid FOR UPDATE),
     deleted AS (DELETE FROM ${t.queue} q USING seen WHERE q.id = seen.id AND seen.status = 'queued' RETURNING q.*)${
       history
         ? `,
     recorded AS (
       ${runInsert(t.runs, {
         job_id: "id", job_name: "job_name", attempt: "attempt", max_attempts: "max_attempts", priority: "priority", outcome: "'cancelled'",
         started_at: "NULL", duration_ms: "NULL", error: "NULL", stack: "NULL", output: "NULL", output_truncated: "false",
         correlation_id: "correlation_id", idempotency_key: "idempotency_key", created_at: "created_at", logs: "NULL", payload: "payload",
       }, "deleted")}
       RETURNING 1)`
         : ""
     }
     SELECT (SELECT status FROM seen) AS seen, EXISTS (SELECT 1 FROM deleted) AS deleted`,
    [id],
  );
  const row = rows[0];
  if (row?.deleted) return "cancelled";
  if (row?.seen === "running") return "running";
  return "not_found";
};
