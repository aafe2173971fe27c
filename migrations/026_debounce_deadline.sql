-- A debounced job's latest due time (`debounce.maxWaitMs`): set by the first enqueue of its series that
-- gives one, from that enqueue's own time, only ever brought closer by later ones. NULL: no cap. Nullable
-- without a default, so adding it rewrites nothing, and the last release's statements, which do not name
-- it, go on as before (its enqueues neither set nor honour a cap).
ALTER TABLE {{prefix}}queue ADD COLUMN IF NOT EXISTS debounce_until timestamptz;
