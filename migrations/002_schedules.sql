-- Recurring jobs, synced from the definitions in code at tick time.
-- The row is the exactly-once guard: a tick advances next_run_at with a compare-and-set on
-- its old value and enqueues the occurrences only when that advance succeeded.
CREATE TABLE {{prefix}}schedules (
  name               text PRIMARY KEY,
  cron               text NOT NULL,
  timezone           text NOT NULL,
  job_name           text NOT NULL,
  payload            jsonb NOT NULL,
  missed             jsonb NOT NULL,
  -- Hash of the definition above; a changed definition is rewritten, an unchanged one never.
  definition_hash    text NOT NULL,
  -- Pause state lives only here, so it survives syncs from code.
  paused             boolean NOT NULL DEFAULT false,
  -- The next occurrence not yet handled; everything before it was enqueued or skipped.
  next_run_at        timestamptz NOT NULL,
  last_enqueued_at   timestamptz,
  last_job_id        uuid,
  last_occurrence_at timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
-- The tick's probe asks "is any unpaused schedule due?" through this index.
CREATE INDEX {{prefix}}schedules_due_idx ON {{prefix}}schedules (next_run_at) WHERE NOT paused;
-- Hash of the whole set of definitions last synced: an idle tick compares it and writes nothing.
ALTER TABLE {{prefix}}state ADD COLUMN schedules_hash text;
