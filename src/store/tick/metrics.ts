import type { Fragment } from "./fragments.js";

/**
 * Per job and minute counters, from the rows the statement's own settle CTEs
 * returned: a write that the fence refused is never counted.
 * Grouped and ordered by job name so concurrent ticks lock metric rows in the
 * same order and cannot deadlock.
 */
export const metricsCte = (table: string, outcomes: NonNullable<Fragment["outcomes"]>): string =>
  `metered AS (
    INSERT INTO ${table} AS m (minute, job_name, succeeded, failed, retried, dead_lettered, requeued,
                               duration_ms_sum, duration_ms_max)
    SELECT date_trunc('minute', now()), job_name,
           count(*) FILTER (WHERE outcome = 'succeeded'),
           count(*) FILTER (WHERE outcome <> 'succeeded'),
           count(*) FILTER (WHERE outcome = 'retried'),
           count(*) FILTER (WHERE outcome = 'dead_lettered'),
           count(*) FILTER (WHERE outcome = 'requeued'),
           coalesce(sum(duration_ms), 0), coalesce(max(duration_ms), 0)
    FROM (${outcomes
      .map((o) => `SELECT job_name, duration_ms, '${o.outcome}'::text AS outcome FROM ${o.cte}`)
      .join(" UNION ALL ")}) o
    GROUP BY job_name ORDER BY job_name
    ON CONFLICT (minute, job_name) DO UPDATE SET
      succeeded = m.succeeded + excluded.succeeded, failed = m.failed + excluded.failed,
      retried = m.retried + excluded.retried, dead_lettered = m.dead_lettered + excluded.dead_lettered,
      requeued = m.requeued + excluded.requeued,
      duration_ms_sum = m.duration_ms_sum + excluded.duration_ms_sum,
      duration_ms_max = greatest(m.duration_ms_max, excluded.duration_ms_max)
    RETURNING 1)`;
