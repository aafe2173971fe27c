import type { Db } from "../db.js";
import { isUuid } from "./paging.js";
import type { Tables } from "./tables.js";

/** Deletes a dead letter for good. False when there was none with this id. */
export const discardDeadLetter = async (db: Db, t: Tables, id: string): Promise<boolean> => {
  if (!isUuid(id)) return false;
  const { rowCount } = await db.query(`DELETE FROM ${t.deadLetters} WHERE id = $1::uuid`, [id]);
  return rowCount > 0;
};
