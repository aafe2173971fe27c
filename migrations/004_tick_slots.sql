-- Tick slots: at most JOBS_MAX_TICKS ticks run at once across a deployment, however many cron
-- deliveries, kicks and fan-outs arrive. A tick takes a free slot (lowest number first, FOR UPDATE
-- SKIP LOCKED) in its first statement and holds it under a lease; a tick killed outright frees its
-- slot when the lease expires. Slots above the configured cap are simply not used.
CREATE TABLE {{prefix}}ticks (
  slot          integer PRIMARY KEY CHECK (slot BETWEEN 1 AND 256),
  -- The token of the tick holding the slot; every write of that tick to its row is fenced on it.
  owner         uuid,
  -- Held while in the future. NULL or past: free.
  expires_at    timestamptz,
  -- Reserved for a tick that was asked to start (fan-out, continuation) and has not arrived yet:
  -- it presents `owner` to take this slot; unclaimed, the reservation expires like a lease.
  reserved      boolean NOT NULL DEFAULT false,
  -- The tick that holds (or last held) the slot: when it ran and what it did, kept up to date by
  -- each of its statements, so a running tick's progress is visible.
  started_at    timestamptz,
  finished_at   timestamptz,
  budget_ms     integer,
  claimed       integer NOT NULL DEFAULT 0,
  succeeded     integer NOT NULL DEFAULT 0,
  retried       integer NOT NULL DEFAULT 0,
  dead_lettered integer NOT NULL DEFAULT 0,
  requeued      integer NOT NULL DEFAULT 0,
  lease_lost    integer NOT NULL DEFAULT 0,
  reclaimed     integer NOT NULL DEFAULT 0
) WITH (fillfactor = 50);
INSERT INTO {{prefix}}ticks (slot) SELECT generate_series(1, 256);
