-- Rate windows of keys that stopped starting jobs (a tenant gone, a limit removed) are deleted by the
-- cleanup, a bounded batch of flow rows at a time in bucket order; this is the bucket the next batch
-- starts after ('' from the first). A constant default: no table rewrite, and the last release's
-- statements never touch the table.
ALTER TABLE {{prefix}}housekeeping ADD COLUMN flow_after text NOT NULL DEFAULT '';
