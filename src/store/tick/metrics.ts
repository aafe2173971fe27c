import { type Fragment, runsOf } from "./fragments.js";
import type { Params } from "../shared/tables.js";

import { DURATION_BOUNDS_MS, HIST_INDEXES, METRICS_ADDED, summedHist } from "../shared/duration-histogram.js";

/** One job's counters for one minute, from the runs some statements ended (as a step returns them). */
export interface MeterRow {
  readonly minute: string;
  readonly job_name: string;
  readonly succeeded: number;
  readonly failed: number;
  readonly retried: number;
  readonly dead_lettered: number;
  readonly requeued: number;
  readonly duration_ms_sum: number;
  readonly duration_ms_max: number;
  /** Runs per duration bucket (DURATION_BOUNDS_MS). */
  readonly hist: number[];
}

/**
 * Per job and minute counters, from the rows the statement's own settle CTEs
 * returned: a write that the fence refused is never counted. One place for
 * what a row of counters is, whether the statement writes it or returns it.
 */
const meterRows = (outcomes: NonNullable<Fragment["outcomes"]>): string =>
  `SELECT date_trunc('minute', now()) AS minute, job_name,
          count(*) FILTER (WHERE outcome = 'succeeded') AS succeeded,
          count(*) FILTER (WHERE outcome <> 'succeeded') AS failed,
          count(*) FILTER (WHERE outcome = 'retried') AS retried,
          count(*) FILTER (WHERE outcome = 'dead_lettered') AS dead_lettered,
          -- A reclaimed attempt (its tick was killed) went back to the queue as a run cut short does: so the
          -- minute's categories add up to its failures, and the charts show it.
          count(*) FILTER (WHERE outcome IN ('requeued', 'reclaimed')) AS requeued,
          coalesce(sum(duration_ms), 0) AS duration_ms_sum, coalesce(max(duration_ms), 0) AS duration_ms_max,
          ARRAY[${HIST_INDEXES.map((i) => `count(*) FILTER (WHERE b = ${i - 1})`).join(", ")}]::int[] AS hist
   FROM (SELECT job_name, duration_ms, outcome, width_bucket(duration_ms, '{${DURATION_BOUNDS_MS.join(",")}}'::int[]) AS b
         FROM (${outcomes.map((o) => `SELECT job_name, duration_ms, '${o.outcome}'::text AS outcome FROM ${runsOf(o)}`).join(" UNION ALL ")}) u) o
   GROUP BY job_name`;

/** This statement's counters as a column, for a statement that leaves writing them to a later one. */
export const meterColumn = (outcomes: NonNullable<Fragment["outcomes"]>): string =>
  outcomes.length > 0 ? `(SELECT coalesce(json_agg(r), '[]'::json) FROM (${meterRows(outcomes)}) r) AS metered` : `'[]'::json AS metered`;

/**
 * Adds this statement's counters, and those earlier statements of the tick
 * returned instead of writing (`carried`), to the metrics rows. Written by one
 * statement at a time per tick, so a busy tick's statements do not queue on the
 * same rows; grouped and ordered by minute and job so concurrent ticks lock
 * metric rows in the same order and cannot deadlock.
 */
export const metricsCte = (table: string, p: Params, outcomes: NonNullable<Fragment["outcomes"]>, carried: readonly MeterRow[] = []): string => {
  const sources = [
    ...(outcomes.length > 0 ? [meterRows(outcomes)] : []),
    ...(carried.length > 0
      ? [`SELECT c.minute, c.job_name, c.succeeded, c.failed, c.retried, c.dead_lettered, c.requeued, c.duration_ms_sum, c.duration_ms_max, c.hist
          FROM jsonb_to_recordset(${p.add(JSON.stringify(carried))}::jsonb) AS c(minute timestamptz, job_name text, succeeded bigint, failed bigint,
            retried bigint, dead_lettered bigint, requeued bigint, duration_ms_sum bigint, duration_ms_max bigint, hist int[])`]
      : []),
  ];
  return `metered AS (
    INSERT INTO ${table} AS m (minute, job_name, succeeded, failed, retried, dead_lettered, requeued,
                               duration_ms_sum, duration_ms_max, duration_hist)
    SELECT minute, job_name, sum(succeeded), sum(failed), sum(retried), sum(dead_lettered), sum(requeued),
           sum(duration_ms_sum), max(duration_ms_max),
           ${summedHist("hist")}
    FROM (${sources.join(" UNION ALL ")}) r
    GROUP BY minute, job_name ORDER BY minute, job_name
    ${METRICS_ADDED}
    RETURNING 1)`;
};

/** Counters of two statements added up, per minute and job. */
export const addMeterRows = (a: readonly MeterRow[], b: readonly MeterRow[]): MeterRow[] => {
  const rows = new Map<string, MeterRow>();
  for (const r of [...a, ...b]) {
    const key = `${r.minute}\u0000${r.job_name}`;
    const o = rows.get(key);
    rows.set(key, o === undefined ? r : {
      minute: r.minute, job_name: r.job_name,
      succeeded: o.succeeded + r.succeeded, failed: o.failed + r.failed, retried: o.retried + r.retried,
      dead_lettered: o.dead_lettered + r.dead_lettered, requeued: o.requeued + r.requeued,
      duration_ms_sum: o.duration_ms_sum + r.duration_ms_sum, duration_ms_max: Math.max(o.duration_ms_max, r.duration_ms_max),
      hist: o.hist.map((n, i) => n + (r.hist[i] ?? 0)),
    });
  }
  return [...rows.values()];
};
