import type { Db } from "../../db.js";
import type { FlowState } from "../../flow/waiting.js";
import { jobJson, type JobView } from "./views.js";
import { runSummaryJson } from "../runs/run-views.js";
import { isoSql, isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

/** Past attempts a job view carries at most (the newest; the runs API has them all). */
const MAX_ATTEMPTS_SHOWN = 100;

/**
 * A job as read, before `src/admin` says what it waits on: for a queued, due job with limits,
 * the state of its buckets (`flow`), else null.
 */
export type JobRecord = Omit<JobView, "waitingOn"> & { readonly flow: FlowState | null };

/**
 * One job by id: from the queue (queued or running), from the dead letters (status `dead`),
 * or, once it finished, from the run history while it keeps it (status `succeeded`, with its
 * output; `cancelled`; or `dead` if its dead letter was discarded). Every view carries the
 * attempts the history holds. Null when none has it: it is older than the history's retention
 * (or was cancelled with the history off), or never existed.
 */
export const getJob = async (db: Db, t: Tables, id: string, withPayload = true, rateScopes: readonly string[] = []): Promise<JobRecord | null> => {
  if (!isUuid(id)) return null;
  // The payload leaves as a column of its own: built into the view's jsonb, a 1 MB payload was copied
  // at each step (about 0.6 s of the server's time for a page the dashboard refreshes every 3 s). An ended
  // job's replays: each followed a death, so one that ended after n deaths was replayed n times (n - 1 if it ended dead).
  const { rows } = await db.query<{ v: Omit<JobRecord, "flow" | "payload"> & { flow?: FlowState | null }; payload: unknown }>(
    `WITH live AS (
       SELECT ${jobJson("q")} || jsonb_build_object('flow', ${flowState(t, "q")}, 'output', NULL, 'outputTruncated', false, 'finishedAt', NULL) AS v, q.payload
       FROM ${t.queue} q WHERE q.id = $1::uuid
       UNION ALL
       SELECT jsonb_build_object(
         'id', d.id, 'job', d.job_name, 'status', 'dead',
         'runAt', NULL, 'priority', d.priority, 'attempt', d.attempts, 'maxAttempts', d.max_attempts,
         'lastError', d.last_error, 'idempotencyKey', d.idempotency_key, 'correlationId', d.correlation_id,
         'leaseExpiresAt', NULL, 'createdAt', ${isoSql("d.created_at")}, 'updatedAt', ${isoSql("d.dead_at")},
         'reason', d.reason, 'deadAt', ${isoSql("d.dead_at")}, 'replays', d.replays, 'flow', NULL,
         'output', NULL, 'outputTruncated', false, 'finishedAt', ${isoSql("d.dead_at")}), d.payload
       FROM ${t.deadLetters} d WHERE d.id = $1::uuid
       LIMIT 1),
     runs AS (SELECT * FROM ${t.runs} r WHERE r.job_id = $1::uuid ORDER BY r.id DESC LIMIT ${MAX_ATTEMPTS_SHOWN}),
     final AS (SELECT * FROM runs WHERE outcome IN ('succeeded', 'dead_lettered', 'cancelled') ORDER BY id DESC LIMIT 1),
     ended AS (
       SELECT jsonb_build_object(
         'id', f.job_id, 'job', f.job_name,
         'status', CASE f.outcome WHEN 'succeeded' THEN 'succeeded' WHEN 'cancelled' THEN 'cancelled' ELSE 'dead' END,
         'runAt', NULL, 'priority', f.priority, 'attempt', f.attempt, 'maxAttempts', f.max_attempts,
         'lastError', f.error, 'idempotencyKey', f.idempotency_key, 'correlationId', f.correlation_id,
         'leaseExpiresAt', NULL, 'createdAt', ${isoSql("f.created_at")}, 'updatedAt', ${isoSql("f.finished_at")},
         'reason', NULL, 'deadAt', CASE WHEN f.outcome = 'dead_lettered' THEN ${isoSql("f.finished_at")} END,
         'replays', (SELECT count(*) FROM runs WHERE outcome = 'dead_lettered') - CASE WHEN f.outcome = 'dead_lettered' THEN 1 ELSE 0 END,
         'flow', NULL, 'output', f.output, 'outputTruncated', f.output_truncated, 'finishedAt', ${isoSql("f.finished_at")}) AS v, f.payload
       FROM final f),
     found AS (SELECT v, payload FROM live UNION ALL SELECT v, payload FROM ended LIMIT 1)
     SELECT v || jsonb_build_object('attempts', (SELECT coalesce(jsonb_agg(${runSummaryJson("r")} ORDER BY r.id), '[]'::jsonb) FROM runs r)) AS v,
            CASE WHEN $2::boolean THEN payload END AS payload
     FROM found`,
    [id, withPayload, JSON.stringify(rateScopes)],
  );
  const row = rows[0];
  return row ? { ...row.v, payload: withPayload ? row.payload : undefined, flow: row.v.flow ?? null } : null;
};

/**
 * A queued, due job with limits: its keys and the state of the buckets it counts in, read in the
 * same statement, so the view can say which limit it waits on. A concurrency bucket's count is its
 * running jobs (as the admission counts them); a rate bucket's starts are in its flow row, read for the
 * rate scopes in code ($3), a key stored under another period of a scope (its periodMs changed) included.
 */
const flowState = (t: Tables, q: string) => {
  const cbucket = `'c:' || ${q}.job_name || ':' || coalesce(${q}.concurrency_key, '')`;
  return `CASE WHEN ${q}.status = 'queued' AND ${q}.flow_key IS NOT NULL AND ${q}.run_at <= now() THEN jsonb_build_object(
    'concurrencyKey', ${q}.concurrency_key, 'rateKeys', ${q}.rate_keys,
    'buckets', (SELECT jsonb_object_agg(b.bucket, b.state) FROM (
        SELECT ${cbucket} AS bucket, jsonb_build_object('running', (SELECT count(*) FROM (
                 SELECT 1 FROM ${t.queue} r WHERE r.status = 'running' AND r.flow_bucket = ${cbucket}) c), 'starts', '[]'::jsonb) AS state
        UNION ALL
        SELECT f.bucket, jsonb_build_object('running', 0, 'starts', to_jsonb(f.starts)) FROM ${t.flow} f
        WHERE f.bucket IN (SELECT 'r:' || s.scope || ':' || e.value FROM jsonb_each_text(coalesce(${q}.rate_keys, '{}')) e
          JOIN jsonb_array_elements_text($3::jsonb) s(scope) ON regexp_replace(s.scope, '[^:]*$', '') = regexp_replace(e.key, '[^:]*$', ''))) b)) END`;
};
