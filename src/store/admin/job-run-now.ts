import type { Db } from "../../db.js";
import { isoSql, isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

export type RunNowOutcome =
  | { readonly kind: "moved" | "due"; readonly runAt: string }
  | { readonly kind: "running" }
  | { readonly kind: "not_found" };

/**
 * Makes a queued job due now (a delayed job, one waiting out its backoff or a debounce).
 * A job already due keeps its place in line; a running one is its tick's. One statement:
 * the update re-checks `status = 'queued'` under the row lock, so a claim that wins the race
 * answers `running`.
 */
export const runJobNow = async (db: Db, t: Tables, id: string): Promise<RunNowOutcome> => {
  if (!isUuid(id)) return { kind: "not_found" };
  const { rows } = await db.query<{ seen: string | null; due: boolean | null; moved: string | null; at: string | null }>(
    `WITH seen AS (SELECT status, run_at FROM ${t.queue} WHERE id = $1::uuid),
     moved AS (UPDATE ${t.queue} SET run_at = now(), updated_at = now()
               WHERE id = $1::uuid AND status = 'queued' AND run_at > now() RETURNING run_at)
     SELECT (SELECT status FROM seen) AS seen, (SELECT run_at <= now() FROM seen) AS due,
            (SELECT ${isoSql("run_at")} FROM moved) AS moved, (SELECT ${isoSql("run_at")} FROM seen) AS at`,
    [id],
  );
  const row = rows[0];
  if (row?.moved) return { kind: "moved", runAt: row.moved };
  if (row?.seen === "queued" && row.due && row.at) return { kind: "due", runAt: row.at };
  // Seen queued and later but not moved: a tick claimed it (or a cancel deleted it) meanwhile.
  if (row?.seen === "running" || row?.seen === "queued") return { kind: "running" };
  return { kind: "not_found" };
};
