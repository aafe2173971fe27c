-- Reads that stay fast as the tables grow: every list and count the API and the dashboard make
-- is served by an index and stops early, instead of scanning the queue or the dead letters.
--
-- The queue's new indexes are partial on queued rows: a claim or a settle rewrites its row
-- (never a HOT update) and a rewritten row gets an entry in every index whose predicate it
-- matches, so these only get entries when a job is enqueued, retried or requeued. Running rows
-- are few and already have queue_lease_idx; unfiltered lists go along the primary key (job ids
-- are time-ordered). Built inside the migration's transaction (no CONCURRENTLY), so writes to the
-- queue wait while they build.

-- Per job: bounded counts, the oldest due job, and the distinct names by a loose index scan.
CREATE INDEX {{prefix}}queue_name_run_idx ON {{prefix}}queue (job_name, run_at) WHERE status = 'queued';
-- Queued jobs of one job, newest first.
CREATE INDEX {{prefix}}queue_name_id_idx ON {{prefix}}queue (job_name, id) WHERE status = 'queued';

-- Dead letters by reason, and by job and reason, most recent first (by job alone and unfiltered
-- already have theirs). Dead letters are written once, so more indexes cost little.
CREATE INDEX {{prefix}}dead_letters_reason_idx ON {{prefix}}dead_letters (reason, dead_at DESC, id DESC);
CREATE INDEX {{prefix}}dead_letters_name_reason_idx ON {{prefix}}dead_letters (job_name, reason, dead_at DESC, id DESC);

-- The queue is rewritten constantly and often drained to empty: vacuum it after 1,000 dead rows
-- plus 1% of its size rather than a fifth of it, unthrottled (it is small and hot in cache), and keep its
-- statistics current so the planner's row estimates for queued and running jobs stay right.
-- Truncating the empty tail would take an exclusive lock that stalls claims; the space is reused.
ALTER TABLE {{prefix}}queue SET (
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.05,
  autovacuum_vacuum_insert_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0,
  autovacuum_analyze_scale_factor = 0.02,
  autovacuum_analyze_threshold = 1000,
  vacuum_truncate = false
);

-- The claim joins the jobs flow_admit admits back to the queue. At a function's default estimate
-- of 1,000 rows the planner hashes the whole queue for that join, a sequential scan in every claim
-- while the queue holds up to some 100,000 jobs; it returns at most a claim's worth (and one row).
ALTER FUNCTION {{prefix}}flow_admit(jsonb, integer, text, integer, jsonb) ROWS 10;
