-- A cancel is recorded in the history as a run with outcome 'cancelled' (its payload kept, so it can be run
-- again), and reading the job says so while the history keeps it. Before, a cancelled job was simply gone,
-- and one replayed from its dead letter and then cancelled read as dead. The outcome check is replaced by
-- its definition, whatever its name; NOT VALID: the rows there hold outcomes the new list takes, and
-- checking them would read the whole history under its lock.
EXECUTE coalesce((
  SELECT string_agg(format('ALTER TABLE {{prefix}}runs DROP CONSTRAINT %I', conname), '; ')
  FROM pg_constraint
  WHERE conrelid = '{{prefix}}runs'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%outcome%'), 'SELECT 1');
ALTER TABLE {{prefix}}runs ADD CONSTRAINT {{prefix}}runs_outcome_check
  CHECK (outcome IN ('succeeded', 'retried', 'dead_lettered', 'requeued', 'reclaimed', 'cancelled')) NOT VALID;
