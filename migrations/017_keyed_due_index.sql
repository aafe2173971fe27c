-- Whether any keyed job is due, in one index probe: a claim asks before it calls the admission. Before, it
-- asked whether any keyed job was queued at all, so a queue holding only delayed or debounced keyed jobs sent
-- every claim through the admission, whose keys held nothing due: an idle tick claimed again and again
-- (46 statements in a 50 s tick with 600 such keys) instead of returning after one.
CREATE INDEX {{prefix}}queue_keyed_due_idx ON {{prefix}}queue (run_at) WHERE status = 'queued' AND flow_key IS NOT NULL;
