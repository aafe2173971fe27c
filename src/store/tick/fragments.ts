import type { Params, Tables } from "../shared/tables.js";

/**
 * One common table expression of a step statement. Several fragments are
 * composed into a single statement, so a tick settles, dead-letters, requeues,
 * claims and records metrics in one round trip, atomically.
 */
export interface Fragment {
  /** `name AS (...)` entries, in dependency order. */
  readonly ctes: string[];
  /** CTEs whose rows end a job here as dead, with the columns of `deadColumns()`. */
  readonly deadSources?: string[];
  /**
   * CTEs returning `job_name, duration_ms, flow_bucket` and the `historyColumns` with the outcome
   * they stand for: each is a transition out of running, counted in the metrics, out of the run's
   * concurrency bucket, and (history on) recorded as a run. `ran`: which of the CTE's rows were runs
   * (SQL over its columns); the others are settled, but neither counted nor recorded.
   */
  readonly outcomes?: Array<{ cte: string; outcome: Outcome; ran?: string }>;
}

/**
 * The due time of the job due first, from the head of a due index: queue_due_idx for any job,
 * queue_plain_due_idx (migration 019) for unkeyed ones, queue_keyed_due_idx (017) for keyed ones.
 * NULL when none is due. An EXISTS may be planned as a sequential scan, which walks every dead row
 * a drain leaves at the start of the table; ORDER BY ... LIMIT 1 is not.
 */
export const dueHead = (t: Tables, jobs: "any" | "unkeyed" | "keyed" = "any"): string =>
  `(SELECT run_at FROM ${t.queue} WHERE status = 'queued'${jobs === "unkeyed" ? " AND flow_key IS NULL" : jobs === "keyed" ? " AND flow_key IS NOT NULL" : ""} AND run_at <= now() ORDER BY run_at LIMIT 1)`;

/** An outcome CTE's rows that were runs (see `Fragment.outcomes`), as a FROM item. */
export const runsOf = (o: { cte: string; ran?: string }): string => (o.ran ? `${o.cte} WHERE ${o.ran}` : o.cte);

export type Outcome = "succeeded" | "retried" | "dead_lettered" | "requeued" | "reclaimed";

export type FragmentBuilder<I> = (t: Tables, p: Params, input: I) => Fragment;

/**
 * The fence every write to a claimed job carries: this row, still running, under this claim's
 * token. The rows are found by primary key, from the settlement's id list (`input`, its JSON
 * parameter), however many jobs are running. Written plainly, `status = 'running'` matches the
 * lease index's predicate, and with statistics from before a backlog (few running) the planner
 * reads that whole index, every running job, to settle a few; compared with a subquery, the
 * status cannot pick that index.
 */
export const FENCE = (alias: string, s: string, input: string) =>
  `${alias}.id = ${s}.id AND ${alias}.status = (SELECT 'running'::text) AND ${alias}.lease_owner = ${s}.owner
   AND ${alias}.id = ANY (ARRAY(SELECT x.id FROM jsonb_to_recordset(${input}) AS x(id uuid)))`;

/** What a dead-letter source returns: the row as it was, plus why it died. */
export const deadColumns = (q: string, error: string, reason: string, duration: string) =>
  `${q}.id, ${q}.job_name, ${q}.payload, ${q}.attempt, ${q}.max_attempts, ${q}.priority,
   ${q}.idempotency_key, ${q}.correlation_id, ${q}.created_at,
   ${q}.flow_key, ${q}.concurrency_key, ${q}.rate_keys, ${q}.flow_bucket, ${q}.replays, ${q}.traceparent,
   ${error} AS dead_error, ${reason} AS dead_reason, ${duration} AS duration_ms`;

/** Every text a settle writes is made storable here too, whoever built the settlement. */
export { storableText as clip } from "../../error-text.js";
