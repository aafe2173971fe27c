import type { Db } from "../../db.js";
import { runJson, type RunView } from "./run-views.js";
import type { Tables } from "../shared/tables.js";

/** Run ids are positive integers of at most 19 digits (bigint). */
export const isRunId = (id: unknown): id is string => typeof id === "string" && /^[1-9]\d{0,18}$/.test(id) && BigInt(id) <= 9_223_372_036_854_775_807n;

/** One run by its id; null when there is none (or the history no longer keeps it). */
export const getRun = async (db: Db, t: Tables, id: string): Promise<RunView | null> => {
  if (!isRunId(id)) return null;
  const { rows } = await db.query<{ v: RunView }>(`SELECT ${runJson("r")} AS v FROM ${t.runs} r WHERE r.id = $1::bigint`, [id]);
  return rows[0]?.v ?? null;
};

/**
 * The payload a run without one of its own ran with: the run that ended that life of the job keeps it
 * (a success, a dead letter, a cancel), the first such after this run. A replay may have edited the
 * payload since, so the job's current one is that run's only when no later run has kept one.
 */
export const runPayload = async (db: Db, t: Tables, jobId: string, runId: string): Promise<{ payload: unknown } | null> => {
  const { rows } = await db.query<{ payload: unknown }>(
    `SELECT payload FROM ${t.runs} WHERE job_id = $1::uuid AND id > $2::bigint AND payload IS NOT NULL ORDER BY id LIMIT 1`,
    [jobId, runId],
  );
  return rows[0] ?? null;
};
