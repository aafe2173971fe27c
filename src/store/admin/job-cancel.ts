import type { Db } from "../../db.js";
import { isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

export type CancelOutcome = "cancelled" | "running" | "not_found";

/**
 * Deletes a queued job. A running job is not touched (its tick owns it until it
 * settles): the outcome says `running`, which the API answers with 409. One
 * statement: the delete re-checks `status = 'queued'` under the row lock, so a
 * claim that wins the race leaves the job running and the answer is `running`.
 */
export const cancelJob = async (db: Db, t: Tables, id: string): Promise<CancelOutcome> => {
  if (!isUuid(id)) return "not_found";
  const { rows } = await db.query<{ seen: string | null; deleted: boolean }>(
    `WITH seen AS (SELECT status FROM ${t.queue} WHERE id = $1::uuid),
     deleted AS (DELETE FROM ${t.queue} WHERE id = $1::uuid AND status = 'queued' RETURNING id)
     SELECT (SELECT status FROM seen) AS seen, EXISTS (SELECT 1 FROM deleted) AS deleted`,
    [id],
  );
  const row = rows[0];
  if (row?.deleted) return "cancelled";
  // Seen as queued but not deleted: a tick claimed it, or another cancel deleted it, meanwhile.
  if (row?.seen === "running" || row?.seen === "queued") return "running";
  return "not_found";
};
