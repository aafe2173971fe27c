-- Dispatch order (priority DESC, run_at, id) as one ascending key, the priority negated (never
-- overflows: |priority| < 2^31), so that a claim can resume after a job with one range instead of
-- stepping over the dead entries every claimed job leaves until a vacuum.
CREATE INDEX {{prefix}}queue_resume_idx ON {{prefix}}queue ((-priority), run_at, id) WHERE status = 'queued' AND flow_key IS NULL;
DROP INDEX {{prefix}}queue_dispatch_idx;
ALTER INDEX {{prefix}}queue_resume_idx RENAME TO {{prefix}}queue_dispatch_idx;
