import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import { isoSql } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";
import { HIST_INDEXES } from "../shared/duration-histogram.js";

/** The ranges the charts offer, each with the bucket it is summed into. */
export const RANGES = {
  "1h": { bucketMs: 60_000, buckets: 60 },
  "24h": { bucketMs: 15 * 60_000, buckets: 96 },
  "7d": { bucketMs: 2 * 3_600_000, buckets: 84 },
} as const;

export type SeriesRange = keyof typeof RANGES;

export { DURATION_BOUNDS } from "../shared/duration-histogram.js";

export interface ThroughputPoint {
  /** Start of the bucket. */
  readonly at: string;
  readonly job: string;
  readonly succeeded: number;
  readonly retried: number;
  readonly deadLettered: number;
  readonly requeued: number;
}

export interface QueuePoint {
  readonly at: string;
  /** The highest the tick saw in the bucket (each counted up to 10,000). */
  readonly due: number;
  readonly running: number;
  readonly oldestWaitMs: number | null;
}

export interface DurationSummary {
  readonly job: string;
  /** Runs counted, per histogram bucket (see DURATION_BOUNDS). */
  readonly hist: number[];
  readonly maxMs: number;
}

export interface Series {
  readonly range: SeriesRange;
  readonly bucketMs: number;
  readonly buckets: number;
  /** The database's clock, and the start of the first bucket (the last one holds now). */
  readonly now: string;
  readonly start: string;
  /** Per bucket, all jobs together; buckets without runs are left out. */
  readonly totals: Array<Omit<ThroughputPoint, "job">>;
  /** Per bucket and job, for the busiest jobs of the range (BUSIEST_JOBS); buckets without rows are left out. */
  readonly throughput: ThroughputPoint[];
  /** How many jobs ran in the range (more than `throughput` names when there are more than BUSIEST_JOBS). */
  readonly jobs: number;
  readonly queue: QueuePoint[];
  /** Per job over the whole range, for the busiest DURATION_JOBS of it. */
  readonly durations: DurationSummary[];
}

/** The jobs a series gives per bucket, and the jobs it gives run times of: the busiest of the range. */
export const BUSIEST_JOBS = 12;
export const DURATION_JOBS = 50;

/** A range from a query string: absent is the last hour; anything else not offered is `invalid_options`. */
export const seriesRange = (text: string | undefined): SeriesRange => {
  if (text === undefined || text === "") return "1h";
  if (Object.hasOwn(RANGES, text)) return text as SeriesRange;
  throw new JobsError("invalid_options", `range must be one of ${Object.keys(RANGES).join(", ")}`, { field: "range" });
};


/**
 * What the dashboard's charts draw, in one statement: throughput per bucket and job, the queue's
 * depth and oldest wait per bucket, and each job's duration histogram over the range. Buckets are
 * aligned to the epoch (`date_bin`), so a 2 h bucket always starts on an even UTC hour. Per job, only
 * the busiest of the range: every job's points were 14 MB at 2,000 jobs, for a page that draws a dozen.
 */
export const getSeries = async (db: Db, t: Tables, range: SeriesRange): Promise<Series> => {
  const { bucketMs, buckets } = RANGES[range];
  const { rows } = await db.query<{ v: Omit<Series, "range" | "bucketMs" | "buckets"> }>(
    `WITH r AS (SELECT now() AS now, date_bin(b, now(), timestamptz 'epoch') - b * ($2::int - 1) AS start, b
                FROM (SELECT $1::int * interval '1 millisecond' AS b) i),
     m AS MATERIALIZED (SELECT date_bin(r.b, x.minute, timestamptz 'epoch') AS at, x.job_name AS job,
                  sum(x.succeeded) AS s, sum(x.retried) AS re, sum(x.dead_lettered) AS d, sum(x.requeued) AS q,
                  max(x.duration_ms_max) AS mx, ${HIST_INDEXES.map((i) => `sum(x.duration_hist[${i}]) AS h${i}`).join(", ")}
           FROM ${t.metrics} x, r WHERE x.minute >= r.start GROUP BY 1, 2),
     per_job AS MATERIALIZED (SELECT job, sum(s + re + d + q) AS runs, max(mx) AS mx, ${HIST_INDEXES.map((i) => `sum(h${i}) AS h${i}`).join(", ")}
                              FROM m GROUP BY job),
     busiest AS (SELECT job FROM per_job ORDER BY runs DESC, job LIMIT ${BUSIEST_JOBS})
     SELECT jsonb_build_object(
       'now', ${isoSql("r.now")}, 'start', ${isoSql("r.start")},
       'totals', coalesce((SELECT jsonb_agg(jsonb_build_object('at', ${isoSql("g.at")}, 'succeeded', g.s, 'retried', g.re,
                             'deadLettered', g.d, 'requeued', g.q) ORDER BY g.at)
                           FROM (SELECT at, sum(s) AS s, sum(re) AS re, sum(d) AS d, sum(q) AS q FROM m GROUP BY at) g), '[]'::jsonb),
       'throughput', coalesce((SELECT jsonb_agg(jsonb_build_object('at', ${isoSql("m.at")}, 'job', m.job, 'succeeded', m.s,
                                 'retried', m.re, 'deadLettered', m.d, 'requeued', m.q) ORDER BY m.at, m.job)
                               FROM m WHERE m.job IN (SELECT job FROM busiest)), '[]'::jsonb),
       'jobs', (SELECT count(*) FROM per_job),
       'durations', coalesce((SELECT jsonb_agg(jsonb_build_object('job', g.job, 'maxMs', g.mx, 'hist', g.hist) ORDER BY g.job)
                              FROM (SELECT job, mx, jsonb_build_array(${HIST_INDEXES.map((i) => `h${i}`).join(", ")}) AS hist
                                    FROM per_job ORDER BY runs DESC, job LIMIT ${DURATION_JOBS}) g), '[]'::jsonb),
       'queue', coalesce((SELECT jsonb_agg(jsonb_build_object('at', ${isoSql("g.at")}, 'due', g.due, 'running', g.running,
                                 'oldestWaitMs', g.w) ORDER BY g.at)
                          FROM (SELECT date_bin(r.b, z.minute, timestamptz 'epoch') AS at, max(z.due) AS due,
                                       max(z.running) AS running, max(z.oldest_wait_ms) AS w
                                FROM ${t.queueMinutes} z WHERE z.minute >= r.start GROUP BY 1) g), '[]'::jsonb)) AS v
     FROM r`,
    [bucketMs, buckets],
  );
  return { range, bucketMs, buckets, ...rows[0]!.v };
};
