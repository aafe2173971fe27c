import type { Db } from "../../db.js";
import { isoSql, isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

export type RunNowOutcome =
  | { readonly kind: "moved" | "due"; readonly runAt: string }
  | { readonly kind: "running" }
  | { readonly kind: "not_found" };

/**
 * Makes a queued job due now (a delayed job, one waiting out its backoff or a debounce).
 * A job already due keeps its place in line; a running one is its tick's. One statement: the
 * row is read under its lock, so the answer is about the row as it is once any write racing
 * this one has committed (a claim that won: running; another run-now: due; a cancel: not found).
 */
export const runJobNow = async (db: Db, t: Tables, id: string): Promise<RunNowOutcome> => {
  if (!isUuid(id)) return { kind: "not_found" };
  const { rows } = await db.query<{ seen: string | null; due: boolean | null; moved: string | null; at: string | null }>(
    `WITH seen AS MATERIALIZED (SELECT id, status, run_at FROM ${t.queue} WHERE id = $1::uuid FOR UPDATE),
     moved AS (UPDATE ${t.queue} q SET run_at = now(), updated_at = now()
               FROM seen WHERE q.id = seen.id AND seen.status = 'queued' AND seen.run_at > now() RETURNING q.run_at)
     SELECT (SELECT status FROM seen) AS seen, (SELECT run_at <= now() FROM seen) AS due,
            (SELECT ${isoSql("run_at")} FROM moved) AS moved, (SELECT ${isoSql("run_at")} FROM seen) AS at`,
    [id],
  );
  const row = rows[0];
  if (row?.moved) return { kind: "moved", runAt: row.moved };
  if (row?.seen === "queued" && row.due && row.at) return { kind: "due", runAt: row.at };
  if (row?.seen === "running") return { kind: "running" };
  return { kind: "not_found" };
};
