import type { Db } from "../../db.js";

/**
 * The database's clock, in milliseconds. A pause, resume or run-now computes the next occurrence
 * from it, as a tick's sync does: from the caller's clock, one 90 s behind ran an occurrence twice
 * and one 10 minutes ahead lost ten (the occurrences' keys only guard the queue, which a finished
 * job has left).
 */
export const databaseNowMs = async (db: Db): Promise<number> => {
  const { rows } = await db.query<{ now_ms: number }>("SELECT (extract(epoch FROM now()) * 1000)::float8 AS now_ms");
  return Number(rows[0]!.now_ms);
};
