-- The queue: one row per job that is waiting (queued) or being run (running).
-- A finished job leaves this table: completed jobs are deleted, dead ones move to dead_letters.
CREATE TABLE {{prefix}}queue (
  id               uuid PRIMARY KEY,
  job_name         text NOT NULL,
  payload          jsonb NOT NULL,
  status           text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running')),
  run_at           timestamptz NOT NULL DEFAULT now(),
  priority         integer NOT NULL DEFAULT 0,
  attempt          integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 5 CHECK (max_attempts >= 1),
  -- The token minted by the claim that owns this run; every later write is fenced on it.
  lease_owner      uuid,
  lease_expires_at timestamptz,
  last_error       text,
  idempotency_key  text,
  correlation_id   text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now()
);

-- The claim walks this index in dispatch order (higher priority first, then oldest run_at).
CREATE INDEX {{prefix}}queue_dispatch_idx ON {{prefix}}queue (priority DESC, run_at, id) WHERE status = 'queued';
-- Reclaiming leases left by a killed tick.
CREATE INDEX {{prefix}}queue_lease_idx ON {{prefix}}queue (lease_expires_at) WHERE status = 'running';
-- An idempotency key dedupes while a job with it is queued or running (finished jobs leave the table).
-- NULL keys never conflict.
CREATE UNIQUE INDEX {{prefix}}queue_idempotency_idx ON {{prefix}}queue (job_name, idempotency_key);
CREATE INDEX {{prefix}}queue_name_idx ON {{prefix}}queue (job_name, status, id);

-- Dead letters keep everything needed to show and replay a job. Their id is the job's id, so a
-- replayed job keeps its identity across replays.
CREATE TABLE {{prefix}}dead_letters (
  id              uuid PRIMARY KEY,
  job_name        text NOT NULL,
  payload         jsonb NOT NULL,
  attempts        integer NOT NULL,
  max_attempts    integer NOT NULL,
  priority        integer NOT NULL DEFAULT 0,
  reason          text NOT NULL,
  last_error      text,
  idempotency_key text,
  correlation_id  text,
  created_at      timestamptz NOT NULL,
  dead_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX {{prefix}}dead_letters_list_idx ON {{prefix}}dead_letters (dead_at DESC, id DESC);
CREATE INDEX {{prefix}}dead_letters_name_idx ON {{prefix}}dead_letters (job_name, dead_at DESC, id DESC);

-- Per job and minute counters, upserted by the statements that settle jobs.
CREATE TABLE {{prefix}}metrics (
  job_name        text NOT NULL,
  minute          timestamptz NOT NULL,
  succeeded       integer NOT NULL DEFAULT 0,
  failed          integer NOT NULL DEFAULT 0,
  retried         integer NOT NULL DEFAULT 0,
  dead_lettered   integer NOT NULL DEFAULT 0,
  requeued        integer NOT NULL DEFAULT 0,
  duration_ms_sum bigint NOT NULL DEFAULT 0,
  duration_ms_max integer NOT NULL DEFAULT 0,
  PRIMARY KEY (minute, job_name)
);

-- One row: when the last tick started, and the report of the last tick that did anything.
CREATE TABLE {{prefix}}state (
  id              integer PRIMARY KEY CHECK (id = 1),
  last_tick_at    timestamptz,
  last_report     jsonb,
  last_report_at  timestamptz
);
INSERT INTO {{prefix}}state (id) VALUES (1);
