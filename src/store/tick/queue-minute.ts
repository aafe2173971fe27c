import type { Tables } from "../shared/tables.js";

/** Counts of due and running jobs stop here: a count past it says "10,000+", never a scan of the queue. */
const COUNT_BOUND = 10_000;

/**
 * The queue's depth and oldest wait for this minute, recorded by the first tick statement of
 * the minute (the others find the row and skip the counting), from the due-time and lease
 * indexes only. Returns what it recorded, for the tick's report and its metrics.
 */
export const queueMinuteCte = (t: Tables): string =>
  `queue_minute AS (
    INSERT INTO ${t.queueMinutes} (minute, due, running, oldest_wait_ms)
    SELECT date_trunc('minute', now()),
           (SELECT count(*) FROM (SELECT 1 FROM ${t.queue} WHERE status = 'queued' AND run_at <= now() LIMIT ${COUNT_BOUND}) d),
           (SELECT count(*) FROM (SELECT 1 FROM ${t.queue} WHERE status = 'running' LIMIT ${COUNT_BOUND}) r),
           (SELECT (extract(epoch FROM now() - min(run_at)) * 1000)::bigint FROM ${t.queue} WHERE status = 'queued' AND run_at <= now())
    WHERE NOT EXISTS (SELECT 1 FROM ${t.queueMinutes} WHERE minute = date_trunc('minute', now()))
    ON CONFLICT (minute) DO NOTHING
    RETURNING due, running, oldest_wait_ms)`;

/** The column reading what `queueMinuteCte` recorded (null when another statement recorded this minute). */
export const QUEUE_MINUTE_COLUMN = `(SELECT jsonb_build_object('due', due, 'running', running, 'oldestWaitMs', oldest_wait_ms) FROM queue_minute) AS "queueMinute"`;
