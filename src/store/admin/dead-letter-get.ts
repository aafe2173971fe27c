import type { Db } from "../../db.js";
import { deadLetterJson, type DeadLetterView } from "./views.js";
import { isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

export const getDeadLetter = async (db: Db, t: Tables, id: string): Promise<DeadLetterView | null> => {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<{ v: DeadLetterView }>(
    `SELECT ${deadLetterJson("d")} AS v FROM ${t.deadLetters} d WHERE d.id = $1::uuid`,
    [id],
  );
  return rows[0]?.v ?? null;
};
