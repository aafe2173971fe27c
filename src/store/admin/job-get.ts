import type { Db } from "../../db.js";
import type { FlowSpec } from "../../flow/spec.js";
import { type FlowState, waitingOn } from "../../flow/waiting.js";
import { jobJson, type JobView } from "./views.js";
import { isoSql, isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

/**
 * One job by id: from the queue (queued or running) or, if it died, from the
 * dead letters (status `dead`). Null when neither has it: it finished (finished
 * jobs leave the queue) or never existed.
 */
export const getJob = async (db: Db, t: Tables, id: string, spec?: FlowSpec): Promise<JobView | null> => {
  if (!isUuid(id)) return null;
  const { rows } = await db.query<{ v: JobView & { flow?: FlowState | null } }>(
    `SELECT ${jobJson("q")} || jsonb_build_object('flow', ${flowState(t, "q")}) AS v FROM ${t.queue} q WHERE q.id = $1::uuid
     UNION ALL
     SELECT jsonb_build_object(
       'id', d.id, 'job', d.job_name, 'payload', d.payload, 'status', 'dead',
       'runAt', NULL, 'priority', d.priority, 'attempt', d.attempts, 'maxAttempts', d.max_attempts,
       'lastError', d.last_error, 'idempotencyKey', d.idempotency_key, 'correlationId', d.correlation_id,
       'leaseExpiresAt', NULL, 'createdAt', ${isoSql("d.created_at")}, 'updatedAt', ${isoSql("d.dead_at")},
       'reason', d.reason, 'deadAt', ${isoSql("d.dead_at")}, 'flow', NULL)
     FROM ${t.deadLetters} d WHERE d.id = $1::uuid
     LIMIT 1`,
    [id],
  );
  const row = rows[0]?.v;
  if (!row) return null;
  const { flow, ...job } = row;
  return { ...job, waitingOn: flow ? waitingOn(job.job, flow, spec) : null };
};

/**
 * A queued, due job with limits: its keys and the state of the buckets it counts in, read in the
 * same statement, so the view can say which limit it waits on.
 */
const flowState = (t: Tables, q: string) => `CASE WHEN ${q}.status = 'queued' AND ${q}.flow_key IS NOT NULL AND ${q}.run_at <= now() THEN jsonb_build_object(
    'concurrencyKey', ${q}.concurrency_key, 'rateKeys', ${q}.rate_keys,
    'buckets', (SELECT jsonb_object_agg(f.bucket, jsonb_build_object('running', f.running, 'starts', to_jsonb(f.starts))) FROM ${t.flow} f
                WHERE f.bucket = 'c:' || ${q}.job_name || ':' || coalesce(${q}.concurrency_key, '')
                   OR f.bucket IN (SELECT 'r:' || e.key || ':' || e.value FROM jsonb_each_text(coalesce(${q}.rate_keys, '{}')) e))) END`;
