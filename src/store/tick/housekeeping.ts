import type { Params, Tables } from "../shared/tables.js";
import { METRICS_ADDED, summedHist } from "../shared/duration-histogram.js";

export interface Housekeeping {
  /** Runs older than this go. */
  readonly historyMs: number;
  readonly metricsMs: number;
  /** Dead letters older than this go; absent: kept. */
  readonly deadLettersMs?: number;
  /** Flow rows (rate windows) not written for this long go: longer than any window a limit may count. */
  readonly flowStaleMs: number;
  /** Rows per table per cleanup. */
  readonly batch: number;
  /** Rows of history and of dead letters per cleanup (at least `batch`). */
  readonly historyBatch: number;
  /** How long a cleanup that found no more than a batch waits before the next. */
  readonly everyMs: number;
}

const ms = (p: Params, value: number) => `${p.add(value)}::bigint * interval '1 millisecond'`;

/**
 * Per-minute metrics before this are folded into quarter-hour rows: older than the hour the stats and
 * the 1 h chart read by the minute, and than any late write of a tick's carried counts.
 */
const FOLD_BEFORE = `date_bin(interval '15 minutes', now() - interval '75 minutes', timestamptz 'epoch')`;

/**
 * Old history, metrics, queue minutes, stale rate windows and (optionally) dead letters, deleted in bounded
 * batches by the final statement of a busy tick. At most one tick at a time cleans (the gate
 * row is taken with SKIP LOCKED, so the others do not wait), and only every `everyMs`, unless
 * a table holds more than a batch past its retention: then the next busy tick goes on.
 * Each delete reads at most `batch` rows from the old end of its index, however big the table;
 * the flow rows, which have no age order, `batch` at a time round the table in bucket order.
 */
export const housekeepingCtes = (t: Tables, p: Params, h: Housekeeping): string[] => {
  const batch = p.add(h.batch);
  const historyBatch = p.add(h.historyBatch);
  const history = `now() - ${ms(p, h.historyMs)}`;
  const metrics = `now() - ${ms(p, h.metricsMs)}`;
  // More than a batch past its retention in any table: the next busy tick cleans again. One probe
  // per table, reading a batch of its oldest index entries, and only when a cleanup runs.
  const behind = [
    `(SELECT finished_at FROM ${t.runs} ORDER BY id OFFSET ${historyBatch}::int LIMIT 1) < ${history}`,
    `(SELECT minute FROM ${t.metrics} ORDER BY minute OFFSET ${batch}::int LIMIT 1) < ${metrics}`,
    `(SELECT minute FROM ${t.queueMinutes} ORDER BY minute OFFSET ${batch}::int LIMIT 1) < ${metrics}`,
    `(SELECT count(*) FROM hk_fold_scan) >= ${batch}::int`,
    // Rate windows: a full batch looked at that found stale ones (a sweep round the table still finding them).
    `((SELECT count(*) FROM hk_flow_scan) >= ${batch}::int AND EXISTS (SELECT 1 FROM hk_flow_scan WHERE updated_at < now() - ${ms(p, h.flowStaleMs)}))`,
    ...(h.deadLettersMs !== undefined
      ? [`(SELECT dead_at FROM ${t.deadLetters} ORDER BY dead_at, id OFFSET ${historyBatch}::int LIMIT 1) < now() - ${ms(p, h.deadLettersMs)}`]
      : []),
  ];
  const ctes = [
    // The next batch of per-minute metrics rows to fold (a quarter's first minute is its quarter's row),
    // read only when a cleanup is due, from where the last fold stopped.
    `hk_fold_scan AS MATERIALIZED (
      SELECT ctid AS row, minute, job_name FROM ${t.metrics}
      WHERE minute >= (SELECT coalesce(metrics_folded_until, '-infinity') FROM ${t.housekeeping} WHERE id = 1 AND next_at <= now())
        AND minute < ${FOLD_BEFORE} AND minute >= ${metrics} AND minute <> date_bin(interval '15 minutes', minute, timestamptz 'epoch')
      ORDER BY minute LIMIT ${batch}::int)`,
    // The next batch of flow rows, read only when a cleanup is due (the gate row says where it resumes,
    // and cannot be read from the gate itself, which writes where the next one does).
    `hk_flow_scan AS MATERIALIZED (
      SELECT bucket, updated_at FROM ${t.flow}
      WHERE bucket > (SELECT flow_after FROM ${t.housekeeping} WHERE id = 1 AND next_at <= now())
      ORDER BY bucket LIMIT ${batch}::int)`,
    // metrics_folded_until: from the last minute folded (more of it may be left), or, with all folded, the cutoff.
    `hk_gate AS (
      UPDATE ${t.housekeeping} SET next_at = now() + CASE
        WHEN ${behind.join(" OR ")} THEN interval '0'
        ELSE ${ms(p, h.everyMs)} END,
        flow_after = CASE WHEN (SELECT count(*) FROM hk_flow_scan) < ${batch}::int THEN '' ELSE (SELECT max(bucket) FROM hk_flow_scan) END,
        metrics_folded_until = CASE WHEN (SELECT count(*) FROM hk_fold_scan) < ${batch}::int THEN ${FOLD_BEFORE} ELSE (SELECT max(minute) FROM hk_fold_scan) END
      WHERE id = (SELECT id FROM ${t.housekeeping} WHERE id = 1 AND next_at <= now() FOR UPDATE SKIP LOCKED)
      RETURNING 1)`,
    // A window a claim writes meanwhile is newer than the cutoff when the delete looks at it again.
    `hk_flow AS (
      DELETE FROM ${t.flow} f
      WHERE EXISTS (SELECT 1 FROM hk_gate) AND f.bucket = ANY (ARRAY(SELECT bucket FROM hk_flow_scan WHERE updated_at < now() - ${ms(p, h.flowStaleMs)}))
        AND f.updated_at < now() - ${ms(p, h.flowStaleMs)}
      RETURNING 1)`,
    // Each delete finds its rows by an array (an index or TID condition), never by a join: `IN (subquery)` was
    // planned as a hash join over the whole table once a batch was a few percent of it (1.2 s at 4M runs).
    `hk_runs AS (
      DELETE FROM ${t.runs} WHERE id = ANY (ARRAY(
        SELECT id FROM (SELECT id, finished_at FROM ${t.runs} WHERE EXISTS (SELECT 1 FROM hk_gate) ORDER BY id LIMIT ${historyBatch}::int) o
        WHERE finished_at < ${history}))
      RETURNING 1)`,
    `hk_metrics AS (
      DELETE FROM ${t.metrics} WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM ${t.metrics} WHERE EXISTS (SELECT 1 FROM hk_gate) AND minute < ${metrics}
        ORDER BY minute LIMIT ${batch}::int))
      RETURNING 1)`,
    `hk_fold AS (
      DELETE FROM ${t.metrics} m
      WHERE EXISTS (SELECT 1 FROM hk_gate) AND m.ctid = ANY (ARRAY(SELECT row FROM hk_fold_scan))
      RETURNING m.*)`,
    `hk_folded AS (
      INSERT INTO ${t.metrics} AS m (minute, job_name, succeeded, failed, retried, dead_lettered, requeued, duration_ms_sum, duration_ms_max, duration_hist)
      SELECT date_bin(interval '15 minutes', minute, timestamptz 'epoch'), job_name, sum(succeeded), sum(failed), sum(retried), sum(dead_lettered),
             sum(requeued), sum(duration_ms_sum), max(duration_ms_max), ${summedHist("duration_hist")}
      FROM hk_fold GROUP BY 1, 2 ORDER BY 1, 2
      ${METRICS_ADDED}
      RETURNING 1)`,
    `hk_minutes AS (
      DELETE FROM ${t.queueMinutes} WHERE minute = ANY (ARRAY(
        SELECT minute FROM ${t.queueMinutes} WHERE EXISTS (SELECT 1 FROM hk_gate) AND minute < ${metrics}
        ORDER BY minute LIMIT ${batch}::int))
      RETURNING 1)`,
  ];
  if (h.deadLettersMs !== undefined) {
    // Letters an operator's replay or discard holds are passed over, not waited for: the cleanup took
    // them in the plan's order, and a replay of many, taking them in its own, deadlocked with it.
    ctes.push(`hk_dead AS (
      DELETE FROM ${t.deadLetters} WHERE id = ANY (ARRAY(
        SELECT id FROM ${t.deadLetters} WHERE EXISTS (SELECT 1 FROM hk_gate) AND dead_at < now() - ${ms(p, h.deadLettersMs)}
        ORDER BY dead_at, id LIMIT ${historyBatch}::int FOR UPDATE SKIP LOCKED))
      RETURNING 1)`);
  }
  return ctes;
};

/** What the cleanup deleted, per table, as one column of the statement. */
export const housekeepingColumn = (h: Housekeeping): string =>
  `jsonb_build_object('ran', EXISTS (SELECT 1 FROM hk_gate), 'runs', (SELECT count(*) FROM hk_runs),
     'metrics', (SELECT count(*) FROM hk_metrics) + (SELECT count(*) FROM hk_minutes), 'flow', (SELECT count(*) FROM hk_flow)${
       h.deadLettersMs !== undefined ? `, 'deadLetters', (SELECT count(*) FROM hk_dead)` : ""
     }) AS housekeeping`;
