import type { Db } from "../../db.js";
import { Params, type Tables } from "../shared/tables.js";

export interface RunNowJob {
  readonly id: string;
  readonly schedule: string;
  readonly job_name: string;
  readonly payload: unknown;
  readonly priority: number;
  readonly max_attempts: number;
  /** `schedule:<name>:manual:<ISO>`; also the correlation id. */
  readonly key: string;
}

/** Enqueues one run of a schedule's job, due at once, and records it as the schedule's last job. */
export const enqueueRunNow = async (db: Db, t: Tables, job: RunNowJob): Promise<{ id: string }> => {
  const p = new Params();
  const text = `
    WITH job AS (
      INSERT INTO ${t.queue} AS q (id, job_name, payload, run_at, priority, max_attempts, idempotency_key, correlation_id)
      SELECT id, job_name, payload, now(), priority, max_attempts, key, key
      FROM jsonb_to_recordset(${p.json([job])}) AS j(id uuid, job_name text, payload jsonb, priority integer, max_attempts integer, key text)
      ON CONFLICT (job_name, idempotency_key) WHERE idempotency_key IS NOT NULL DO UPDATE SET idempotency_key = excluded.idempotency_key
      RETURNING q.id),
    touched AS (
      UPDATE ${t.schedules} SET last_enqueued_at = now(), last_job_id = (SELECT id FROM job), updated_at = now()
      WHERE name = ${p.add(job.schedule)}::text
      RETURNING 1)
    SELECT (SELECT id::text FROM job) AS id, (SELECT count(*) FROM touched)::int AS touched`;
  const { rows } = await db.query<{ id: string }>(text, p.values);
  return { id: rows[0]!.id };
};
