import type { Db } from "../../db.js";
import { boundedCount, COUNT_LIMIT, looseScanCte, looseScanRows, perKeyLimit, secondLimit } from "../shared/bounded.js";
import { isoSql } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

export interface QueueDepth {
  readonly job: string;
  readonly status: "queued" | "running";
  /** Exact up to `countLimit`; at the limit with `countIsLowerBound`, there are more. */
  readonly count: number;
  /** Present (true) only when there are more than `count` jobs: show "10,000+". */
  readonly countIsLowerBound?: true;
  /** Of the queued jobs already due: how long the oldest has waited, in ms (null if none is due). */
  readonly oldestWaitingMs: number | null;
}

export interface DeadLetterCount {
  readonly job: string;
  /** Exact up to `countLimit`; at the limit with `countIsLowerBound`, there are more. */
  readonly count: number;
  /** Present (true) only when there are more than `count` dead letters of this job. */
  readonly countIsLowerBound?: true;
  readonly lastDeadAt: string;
}

export interface MinuteCounts {
  readonly minute: string;
  readonly job: string;
  readonly succeeded: number;
  readonly failed: number;
  readonly retried: number;
  readonly deadLettered: number;
  /** Cut short at a deadline, or reclaimed after its tick was killed: back to the queue either way. */
  readonly requeued: number;
  readonly durationMsSum: number;
  readonly durationMsMax: number;
}

export interface Stats {
  /** The database's clock when these were read. */
  readonly now: string;
  readonly queue: QueueDepth[];
  /** The longest any due job has waited, over all jobs. */
  readonly oldestWaitingMs: number | null;
  readonly deadLetters: DeadLetterCount[];
  /** Where counts stop (10,000): counting further would read every row. */
  readonly countLimit: number;
  /** Per job and minute, the last 60 minutes, oldest first, for the busiest 50 jobs of the hour. */
  readonly minutes: MinuteCounts[];
  readonly lastTickAt: string | null;
  readonly lastReport: Record<string, unknown> | null;
  readonly lastReportAt: string | null;
  /** Ticks holding a slot now, across the deployment. */
  readonly ticksRunning: number;
  /** Runs now per concurrency key, the busiest 50 (`jobs.stats()` adds each one's job, key and limit). */
  readonly flowRunning: Array<{ bucket: string; running: number; job?: string; key?: string; limit?: number }>;
}

const waited = (expr: string) => `(extract(epoch FROM now() - ${expr}) * 1000)::bigint`;

/** A bounded count as its JSON fields: `count`, and `countIsLowerBound` only when its limit `lim` was passed. */
const countFields = (n: string, lim: string) =>
  `jsonb_build_object('count', least(${n}, ${lim})) || CASE WHEN ${n} > ${lim} THEN '{"countIsLowerBound": true}'::jsonb ELSE '{}'::jsonb END`;

/** Jobs `minutes` gives: every job's minutes were 21 MB at 2,000 busy jobs. */
export const MINUTES_JOBS = 50;

/** The last hour's counts per job and minute, for the busiest MINUTES_JOBS jobs of the hour, as a jsonb array. */
const MINUTES = (t: Tables): string => `coalesce((
         WITH hour AS MATERIALIZED (SELECT * FROM ${t.metrics} WHERE minute > date_trunc('minute', now()) - interval '60 minutes'),
              busiest AS (SELECT job_name FROM hour GROUP BY job_name
                          ORDER BY sum(succeeded + retried + dead_lettered + requeued) DESC, job_name LIMIT ${MINUTES_JOBS})
         SELECT jsonb_agg(jsonb_build_object(
                  'minute', ${isoSql("minute")}, 'job', job_name, 'succeeded', succeeded, 'failed', failed,
                  'retried', retried, 'deadLettered', dead_lettered, 'requeued', requeued,
                  'durationMsSum', duration_ms_sum, 'durationMsMax', duration_ms_max) ORDER BY minute, job_name)
         FROM hour WHERE job_name IN (SELECT job_name FROM busiest)), '[]'::jsonb)`;

// Each count stops at COUNT_LIMIT, or sooner when many jobs share what one read may count (COUNT_BUDGET): 50
// busy jobs counted to 10,000 each read half a million index entries (and their heap pages) per read. The
// jobs that reach their share count on into what the others left (secondLimit).
// flowRunning: running jobs per concurrency bucket (a claim counts them so), as many as the fleet runs at once.
/**
 * Everything the stats endpoint and the dashboard's overview show, in one statement that reads
 * no table whole: job names come from loose scans of the per-job indexes (queued jobs, dead
 * letters), each count stops at COUNT_LIMIT, the oldest due job of each is the first entry of its
 * index, and running jobs (few: at most the ticks' concurrency) are read along the lease index.
 */
export const getStats = async (db: Db, t: Tables, minutes = true): Promise<Stats> => {
  const { rows } = await db.query<{ v: Stats }>(
    `WITH RECURSIVE ${looseScanCte("queued_heads", t.queue, "job_name", "run_at", "run_at", "l.status = 'queued'")},
     ${looseScanCte("dead_heads", t.deadLetters, "job_name", "dead_at", "dead_at DESC", "true")},
     limits AS MATERIALIZED (SELECT ${perKeyLimit("queued_heads")} AS queued, ${perKeyLimit("dead_heads")} AS dead),
     queued1 AS MATERIALIZED (
       SELECT h.key, h.first, ${boundedCount(t.queue, "job_name", "h.key", "c.run_at", "c.status = 'queued'", "(SELECT queued FROM limits)")} AS n
       FROM ${looseScanRows("queued_heads", "h")}),
     dead1 AS MATERIALIZED (
       SELECT h.key, h.first, ${boundedCount(t.deadLetters, "job_name", "h.key", "c.dead_at DESC, c.id DESC", "true", "(SELECT dead FROM limits)")} AS n
       FROM ${looseScanRows("dead_heads", "h")}),
     limits2 AS MATERIALIZED (
       SELECT ${secondLimit("queued1", "(SELECT queued FROM limits)")} AS queued, ${secondLimit("dead1", "(SELECT dead FROM limits)")} AS dead),
     depth AS MATERIALIZED (
       SELECT q.key AS job_name, 'queued' AS status, q.first AS first_run,
              CASE WHEN q.n > l.queued AND (SELECT queued FROM limits2) > l.queued
                   THEN ${boundedCount(t.queue, "job_name", "q.key", "c.run_at", "c.status = 'queued'", "(SELECT queued FROM limits2)")} ELSE q.n END AS n,
              CASE WHEN q.n > l.queued THEN (SELECT queued FROM limits2) ELSE l.queued END AS lim
       FROM queued1 q, limits l
       UNION ALL
       SELECT r.job_name, 'running', NULL, count(*)::int, ${COUNT_LIMIT} FROM ${t.queue} r WHERE r.status = 'running' GROUP BY r.job_name),
     dead AS MATERIALIZED (
       SELECT d.key AS job_name, d.first AS last,
              CASE WHEN d.n > l.dead AND (SELECT dead FROM limits2) > l.dead
                   THEN ${boundedCount(t.deadLetters, "job_name", "d.key", "c.dead_at DESC, c.id DESC", "true", "(SELECT dead FROM limits2)")} ELSE d.n END AS n,
              CASE WHEN d.n > l.dead THEN (SELECT dead FROM limits2) ELSE l.dead END AS lim
       FROM dead1 d, limits l)
     SELECT jsonb_build_object(
       'now', ${isoSql("now()")},
       'queue', coalesce((
         SELECT jsonb_agg(jsonb_build_object('job', job_name, 'status', status,
                            'oldestWaitingMs', CASE WHEN first_run <= now() THEN ${waited("first_run")} END) || ${countFields("n", "lim")}
                          ORDER BY job_name, status)
         FROM depth), '[]'::jsonb),
       'oldestWaitingMs', (SELECT ${waited("min(first_run)")} FROM depth WHERE first_run <= now()),
       'deadLetters', coalesce((
         SELECT jsonb_agg(jsonb_build_object('job', job_name, 'lastDeadAt', ${isoSql("last")}) || ${countFields("n", "lim")} ORDER BY job_name)
         FROM dead), '[]'::jsonb),
       'countLimit', ${COUNT_LIMIT},
       'minutes', ${minutes ? MINUTES(t) : "'[]'::jsonb"},
       'lastTickAt', (SELECT ${isoSql("last_tick_at")} FROM ${t.state} WHERE id = 1),
       'lastReport', (SELECT jsonb_build_object(
           'slot', k.slot, 'claimed', k.claimed, 'succeeded', k.succeeded, 'retried', k.retried,
           'deadLettered', k.dead_lettered, 'requeued', k.requeued, 'leaseLost', k.lease_lost, 'reclaimed', k.reclaimed,
           'startedAt', ${isoSql("k.started_at")}, 'finishedAt', ${isoSql("k.finished_at")},
           'inProgress', k.finished_at IS NULL AND k.expires_at > now(),
           'durationMs', ${waited("k.started_at")} - coalesce(${waited("k.finished_at")}, 0))
         FROM ${t.ticks} k WHERE k.started_at IS NOT NULL ORDER BY k.started_at DESC LIMIT 1),
       'lastReportAt', (SELECT ${isoSql("coalesce(k.finished_at, k.started_at)")} FROM ${t.ticks} k
                        WHERE k.started_at IS NOT NULL ORDER BY k.started_at DESC LIMIT 1),
       'ticksRunning', (SELECT count(*) FROM ${t.ticks} WHERE expires_at > now() AND NOT reserved),
       'flowRunning', coalesce((SELECT jsonb_agg(jsonb_build_object('bucket', f.bucket, 'running', f.running) ORDER BY f.running DESC, f.bucket)
                                FROM (SELECT flow_bucket AS bucket, count(*)::int AS running FROM ${t.queue}
                                      WHERE status = 'running' AND flow_bucket IS NOT NULL
                                      GROUP BY flow_bucket ORDER BY running DESC, bucket LIMIT 50) f), '[]'::jsonb)) AS v`,
  );
  return rows[0]!.v;
};
