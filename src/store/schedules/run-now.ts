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
  /** `schedule:<name>:manual:<ISO>`: the correlation id (no idempotency key: each call is a run of its own). */
  readonly key: string;
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
export const enqueueRunNow = async (db: Db, t: Tables, job: RunNowJob, row: ScheduleRowInput): Promise<{ id: string }> => {
  const p = new Params();
  const text = `
    WITH job AS (
      ${queueInsert(t, `${selectColumns("j", { run_at: "now()", idempotency_key: "NULL::text", correlation_id: "j.key", debounce_key: "NULL::text", traceparent: "j.traceparent" })}
      FROM jsonb_to_recordset(${p.json([job])}) AS j(id uuid, job_name text, payload jsonb, priority integer, max_attempts integer, key text,
        flow_key text, concurrency_key text, rate_keys jsonb, traceparent text)`,
      `RETURNING q.id`)}),
    touched AS (
      ${scheduleInsert(t, p.json([row]), "ON CONFLICT (name) DO UPDATE SET last_enqueued_at = now(), last_job_id = excluded.last_job_id, updated_at = now()",
        { last_enqueued_at: "now()", last_job_id: "(SELECT id FROM job)" })}
      RETURNING s.xmax = 0 AS created),
    ${resyncIfCreated(t, "touched")}
    SELECT (SELECT id::text FROM job) AS id, (SELECT count(*) FROM touched)::int AS touched`;
  const { rows } = await db.query<{ id: string }>(text, p.values);
  return { id: rows[0]!.id };
};
