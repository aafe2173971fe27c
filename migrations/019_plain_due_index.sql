-- Whether any unkeyed job is due, in one index probe, as migration 017 answers it for keyed jobs: a claim
-- asks before it walks the dispatch index. That index leads with the priority, so when no unkeyed job is
-- due (a queue of delayed jobs) the walk read all of it, twice in a claim with flow control (26,000 pages
-- for 900,000 delayed jobs, each minute's idle tick), whenever the statistics expected due rows.
CREATE INDEX {{prefix}}queue_plain_due_idx ON {{prefix}}queue (run_at) WHERE status = 'queued' AND flow_key IS NULL;
