-- Every claim and settle rewrites its queue row, and a rewritten row gets a new entry in
-- every index of the table. Keep only the indexes the hot path needs:
-- - the idempotency index only for jobs that have a key (most do not);
-- - no index by job name: listing by name scans the live queue, which only holds jobs
--   that are queued or running.
DROP INDEX {{prefix}}queue_idempotency_idx;
CREATE UNIQUE INDEX {{prefix}}queue_idempotency_idx ON {{prefix}}queue (job_name, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
DROP INDEX {{prefix}}queue_name_idx;
