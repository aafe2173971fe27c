import type { Db } from "../../db.js";
import { isUuid } from "../shared/sql.js";
import { Params, type Tables } from "../shared/tables.js";

/** Deletes dead letters for good, in one statement. Returns the ids that existed (and are now gone). */
export const discardDeadLetters = async (db: Db, t: Tables, ids: readonly string[]): Promise<string[]> => {
  // An id that is not a string names no dead letter (as a malformed one does).
  const valid = [...new Set(ids.filter((id) => typeof id === "string").map((id) => id.toLowerCase()))].filter(isUuid);
  if (valid.length === 0) return [];
  const p = new Params();
  const { rows } = await db.query<{ id: string }>(
    // Locked in id order first, as a bulk replay locks them (see replay-bulk.ts): two such statements never deadlock.
    `DELETE FROM ${t.deadLetters} WHERE id IN (
       SELECT id FROM ${t.deadLetters} WHERE id IN (SELECT (value #>> '{}')::uuid FROM jsonb_array_elements(${p.json(valid)})) ORDER BY id FOR UPDATE)
     RETURNING id::text`,
    p.values,
  );
  return rows.map((r) => r.id);
};
