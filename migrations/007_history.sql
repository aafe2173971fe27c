-- Run history: every attempt that ends (succeeded, retried, dead-lettered, requeued at a deadline,
-- reclaimed after a killed tick) is one row, written by the statement that settles it.
CREATE TABLE {{prefix}}runs (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id           uuid NOT NULL,
  job_name         text NOT NULL,
  attempt          integer NOT NULL,
  max_attempts     integer,
  priority         integer,
  outcome          text NOT NULL CHECK (outcome IN ('succeeded', 'retried', 'dead_lettered', 'requeued', 'reclaimed')),
  started_at       timestamptz,
  finished_at      timestamptz NOT NULL DEFAULT now(),
  duration_ms      integer,
  error            text,
  stack            text,
  -- The handler's return value as JSON (at most JOBS_MAX_OUTPUT_BYTES; larger is left out and marked).
  output           jsonb,
  output_truncated boolean NOT NULL DEFAULT false,
  correlation_id   text,
  idempotency_key  text,
  -- When the job was first enqueued (a replay keeps it).
  created_at       timestamptz,
  -- The payload, on the run that ended the job (succeeded or dead-lettered), so it can be run again.
  payload          jsonb,
  -- The run's last ctx.log lines.
  logs             jsonb
);
-- Newest first is id order (rows come in finishing order; a time range is found by a binary
-- search over ids). Every index here is paid by every run, so succeeded runs, most of them,
-- get entries in three only; the indexes for failures hold failures alone.
CREATE INDEX {{prefix}}runs_job_idx ON {{prefix}}runs (job_id);
CREATE INDEX {{prefix}}runs_name_idx ON {{prefix}}runs (job_name, id);
CREATE INDEX {{prefix}}runs_failed_idx ON {{prefix}}runs (outcome, id) WHERE outcome <> 'succeeded';
CREATE INDEX {{prefix}}runs_name_failed_idx ON {{prefix}}runs (job_name, outcome, id) WHERE outcome <> 'succeeded';
CREATE INDEX {{prefix}}runs_correlation_idx ON {{prefix}}runs (correlation_id, id) WHERE correlation_id IS NOT NULL;
CREATE INDEX {{prefix}}runs_idempotency_idx ON {{prefix}}runs (idempotency_key, id) WHERE idempotency_key IS NOT NULL;
-- Insert-only and deleted from the old end: vacuum after deletes, not by the table's size.
ALTER TABLE {{prefix}}runs SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05);

-- The oldest due job and a bounded count of due jobs, read once a minute by a tick: only queued
-- rows have entries, so the claim (queued -> running) adds none.
CREATE INDEX {{prefix}}queue_due_idx ON {{prefix}}queue (run_at) WHERE status = 'queued';

-- The trace context (W3C traceparent) of the request that enqueued a job, so its runs link back to it.
ALTER TABLE {{prefix}}queue ADD COLUMN traceparent text;
ALTER TABLE {{prefix}}dead_letters ADD COLUMN traceparent text;
-- A replayed dead letter keeps its first created time and counts its replays.
ALTER TABLE {{prefix}}queue ADD COLUMN replays integer NOT NULL DEFAULT 0;
ALTER TABLE {{prefix}}dead_letters ADD COLUMN replays integer NOT NULL DEFAULT 0;

-- Per minute: durations as a histogram (bounds in ms: 10, 50, 100, 250, 500, 1000, 2500, 5000,
-- 10000, 30000, 60000, more), and the queue's depth and oldest wait as a tick saw them.
ALTER TABLE {{prefix}}metrics ADD COLUMN duration_hist integer[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0,0,0,0,0}';
CREATE TABLE {{prefix}}queue_minutes (
  minute          timestamptz PRIMARY KEY,
  -- Counted up to a bound (10,000), never by scanning the queue.
  due             integer NOT NULL,
  running         integer NOT NULL,
  oldest_wait_ms  bigint
);

-- When the next cleanup of old history, metrics and dead letters may run. One row, apart from
-- the tick state row, so a long cleanup never holds up a tick's first statement.
CREATE TABLE {{prefix}}housekeeping (
  id      integer PRIMARY KEY CHECK (id = 1),
  next_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO {{prefix}}housekeeping (id) VALUES (1);
