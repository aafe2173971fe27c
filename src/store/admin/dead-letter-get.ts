import type { Db } from "../../db.js";
import { deadLetterJson, type DeadLetterView } from "./views.js";
import { isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

export const getDeadLetter = async (db: Db, t: Tables, id: string): Promise<DeadLetterView | null> => {
  if (!isUuid(id)) return null;
  // The payload as a column of its own: copied into the view's jsonb, a large one cost several times its reading.
  const { rows } = await db.query<{ v: Omit<DeadLetterView, "payload">; payload: unknown }>(
    `SELECT ${deadLetterJson("d")} AS v, d.payload FROM ${t.deadLetters} d WHERE d.id = $1::uuid`,
    [id],
  );
  const row = rows[0];
  return row ? { ...row.v, payload: row.payload } : null;
};
