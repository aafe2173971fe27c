import type { Db } from "../../db.js";
import { queueInsert, selectColumns } from "../shared/queue-insert.js";
import { Params, type Tables } from "../shared/tables.js";
import { resyncIfCreated, type ScheduleRowInput, scheduleInsert } from "./row-insert.js";

export interface RunNowJob {
  readonly id: string;
  readonly schedule: string;
  readonly job_name: string;
  readonly payload: unknown;
  readonly priority: number;
  readonly max_attempts: number;
  /** `schedule:<name>:manual:<ISO>`: the correlation id. */
  readonly key: string;
  /** The caller's key (a dashboard form's token): while a job with it is queued or running, no other is enqueued. Null: each call is a run of its own. */
  readonly idempotency_key: string | null;
  readonly flow_key: string | null;
  readonly concurrency_key: string | null;
  readonly rate_keys: Record<string, string> | null;
  /** The trace context of the caller (see `Observer.traceparent`). */
  readonly traceparent: string | null;
}

/**
 * Enqueues one run of a schedule's job, due at once, and records it as the schedule's last job. The
 * row is created from the code's definition if no tick has synced it yet (as a pause does), so the
 * run is recorded even then.
 */
export const enqueueRunNow = async (db: Db, t: Tables, job: RunNowJob, row: ScheduleRowInput): Promise<{ id: string; deduplicated: boolean }> => {
  const p = new Params();
  const text = `
    WITH job AS (
      ${queueInsert(t, `${selectColumns("j", { run_at: "now()", idempotency_key: "j.idempotency_key", correlation_id: "j.key", debounce_key: "NULL::text", traceparent: "j.traceparent" })}
      FROM jsonb_to_recordset(${p.json([job])}) AS j(id uuid, job_name text, payload jsonb, priority integer, max_attempts integer, key text,
        idempotency_key text, flow_key text, concurrency_key text, rate_keys jsonb, traceparent text)`,
      `ON CONFLICT (job_name, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING q.id`)}),
    touched AS (
      ${scheduleInsert(t, p.json([row]), `ON CONFLICT (name) DO UPDATE SET
          last_enqueued_at = CASE WHEN excluded.last_job_id IS NULL THEN s.last_enqueued_at ELSE now() END,
          last_job_id = coalesce(excluded.last_job_id, s.last_job_id), updated_at = now()`,
        { last_enqueued_at: "now()", last_job_id: "(SELECT id FROM job)" })}
      RETURNING s.xmax = 0 AS created),
    ${resyncIfCreated(t, "touched")}
    SELECT (SELECT id::text FROM job) AS id, (SELECT count(*) FROM touched)::int AS touched`;
  const { rows } = await db.query<{ id: string | null }>(text, p.values);
  if (rows[0]?.id) return { id: rows[0].id, deduplicated: false };
  // The key is held: the job holding it (committed by another call as this one ran, so found by a statement
  // of its own), or, once it has run, the job its last run in the history names.
  const { rows: held } = await db.query<{ id: string | null }>(
    `SELECT coalesce((SELECT id FROM ${t.queue} WHERE job_name = $1 AND idempotency_key = $2),
       (SELECT job_id FROM ${t.runs} WHERE idempotency_key = $2 AND job_name = $1 ORDER BY id DESC LIMIT 1))::text AS id`,
    [job.job_name, job.idempotency_key],
  );
  return { id: held[0]?.id ?? job.id, deduplicated: true };
};
