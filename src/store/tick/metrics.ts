import type { Fragment } from "./fragments.js";

/** Upper bounds (exclusive, ms) of the duration histogram's buckets; the last bucket holds the rest. */
export const DURATION_BOUNDS_MS = [10, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const;
const BUCKETS = DURATION_BOUNDS_MS.length + 1;

/**
 * Per job and minute counters, from the rows the statement's own settle CTEs
 * returned: a write that the fence refused is never counted.
 * Grouped and ordered by job name so concurrent ticks lock metric rows in the
 * same order and cannot deadlock.
 */
export const metricsCte = (table: string, outcomes: NonNullable<Fragment["outcomes"]>): string =>
  `metered AS (
    INSERT INTO ${table} AS m (minute, job_name, succeeded, failed, retried, dead_lettered, requeued,
                               duration_ms_sum, duration_ms_max, duration_hist)
    SELECT date_trunc('minute', now()), job_name,
           count(*) FILTER (WHERE outcome = 'succeeded'),
           count(*) FILTER (WHERE outcome <> 'succeeded'),
           count(*) FILTER (WHERE outcome = 'retried'),
           count(*) FILTER (WHERE outcome = 'dead_lettered'),
           count(*) FILTER (WHERE outcome = 'requeued'),
           coalesce(sum(duration_ms), 0), coalesce(max(duration_ms), 0),
           ARRAY[${Array.from({ length: BUCKETS }, (_, i) => `count(*) FILTER (WHERE b = ${i})`).join(", ")}]::int[]
    FROM (SELECT job_name, duration_ms, outcome, width_bucket(duration_ms, '{${DURATION_BOUNDS_MS.join(",")}}'::int[]) AS b
          FROM (${outcomes.map((o) => `SELECT job_name, duration_ms, '${o.outcome}'::text AS outcome FROM ${o.cte}`).join(" UNION ALL ")}) u) o
    GROUP BY job_name ORDER BY job_name
    ON CONFLICT (minute, job_name) DO UPDATE SET
      succeeded = m.succeeded + excluded.succeeded, failed = m.failed + excluded.failed,
      retried = m.retried + excluded.retried, dead_lettered = m.dead_lettered + excluded.dead_lettered,
      requeued = m.requeued + excluded.requeued,
      duration_ms_sum = m.duration_ms_sum + excluded.duration_ms_sum,
      duration_ms_max = greatest(m.duration_ms_max, excluded.duration_ms_max),
      duration_hist = ARRAY(SELECT a + b FROM unnest(m.duration_hist, excluded.duration_hist) WITH ORDINALITY AS h(a, b, i) ORDER BY i)
    RETURNING 1)`;
