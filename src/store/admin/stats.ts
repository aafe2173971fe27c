import type { Db } from "../../db.js";
import { isoSql } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";

export interface QueueDepth {
  readonly job: string;
  readonly status: "queued" | "running";
  readonly count: number;
  /** Of the queued jobs already due: how long the oldest has waited, in ms (null if none is due). */
  readonly oldestWaitingMs: number | null;
}

export interface MinuteCounts {
  readonly minute: string;
  readonly job: string;
  readonly succeeded: number;
  readonly failed: number;
  readonly retried: number;
  readonly deadLettered: number;
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
  readonly deadLetters: Array<{ job: string; count: number; lastDeadAt: string }>;
  /** Per job and minute, the last 60 minutes, oldest first. */
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

/** Everything the stats endpoint and the dashboard's overview show, in one statement. */
export const getStats = async (db: Db, t: Tables): Promise<Stats> => {
  const { rows } = await db.query<{ v: Stats }>(
    `SELECT jsonb_build_object(
       'now', ${isoSql("now()")},
       'queue', coalesce((
         SELECT jsonb_agg(jsonb_build_object('job', job_name, 'status', status, 'count', n, 'oldestWaitingMs', ${waited("oldest")})
                          ORDER BY job_name, status)
         FROM (SELECT job_name, status, count(*) AS n,
                      min(run_at) FILTER (WHERE status = 'queued' AND run_at <= now()) AS oldest
               FROM ${t.queue} GROUP BY job_name, status) g), '[]'::jsonb),
       'oldestWaitingMs', (SELECT ${waited("min(run_at)")} FROM ${t.queue} WHERE status = 'queued' AND run_at <= now()),
       'deadLetters', coalesce((
         SELECT jsonb_agg(jsonb_build_object('job', job_name, 'count', n, 'lastDeadAt', ${isoSql("last")}) ORDER BY job_name)
         FROM (SELECT job_name, count(*) AS n, max(dead_at) AS last FROM ${t.deadLetters} GROUP BY job_name) g), '[]'::jsonb),
       'minutes', coalesce((
         SELECT jsonb_agg(jsonb_build_object(
                  'minute', ${isoSql("minute")}, 'job', job_name, 'succeeded', succeeded, 'failed', failed,
                  'retried', retried, 'deadLettered', dead_lettered, 'requeued', requeued,
                  'durationMsSum', duration_ms_sum, 'durationMsMax', duration_ms_max) ORDER BY minute, job_name)
         FROM ${t.metrics} WHERE minute > date_trunc('minute', now()) - interval '60 minutes'), '[]'::jsonb),
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
                                FROM (SELECT bucket, running FROM ${t.flow} WHERE running > 0 ORDER BY running DESC, bucket LIMIT 50) f), '[]'::jsonb)) AS v`,
  );
  return rows[0]!.v;
};
