/**
 * The metrics' duration histogram, once: its buckets, how a statement sums them, and how a row adds to
 * one already stored. The tick's counters, the housekeeping's fold into quarter hours and the charts'
 * series all read it from here.
 */

/** Upper bounds (exclusive, ms) of the buckets; one more bucket holds the rest. */
export const DURATION_BOUNDS_MS = [10, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000] as const;

/** The buckets' upper bounds as the charts read them, the last one open. */
export const DURATION_BOUNDS = [...DURATION_BOUNDS_MS, Infinity] as const;

/** Positions of the buckets in `duration_hist` (1-based, as PostgreSQL's arrays). */
export const HIST_INDEXES = DURATION_BOUNDS.map((_, i) => i + 1);

/** The histograms of `column` over a group, bucket by bucket, as one `int[]`. */
export const summedHist = (column: string): string => `ARRAY[${HIST_INDEXES.map((i) => `sum(${column}[${i}])`).join(", ")}]::int[]`;

/** The upsert's `ON CONFLICT` for a metrics row (`m`, the table's alias): every counter added, the longest run kept. */
export const METRICS_ADDED = `ON CONFLICT (minute, job_name) DO UPDATE SET
      succeeded = m.succeeded + excluded.succeeded, failed = m.failed + excluded.failed,
      retried = m.retried + excluded.retried, dead_lettered = m.dead_lettered + excluded.dead_lettered,
      requeued = m.requeued + excluded.requeued,
      duration_ms_sum = m.duration_ms_sum + excluded.duration_ms_sum,
      duration_ms_max = greatest(m.duration_ms_max, excluded.duration_ms_max),
      duration_hist = ARRAY(SELECT a + b FROM unnest(m.duration_hist, excluded.duration_hist) WITH ORDINALITY AS h(a, b, i) ORDER BY i)`;
