-- Flow control: per-key concurrency, rate limits (also shared by a group of jobs), debounce, and
-- fairness across keys, decided inside the claim. Keys are computed at enqueue and stored with the
-- job; the limits themselves live in code and come with every claim, so changing one needs no migration.
ALTER TABLE {{prefix}}queue
  -- The key a claim shares its slots by (round-robin): the concurrency key, else the first rate key.
  ADD COLUMN flow_key text,
  -- The job's concurrency key when it was enqueued ('' for a limit without a key function).
  ADD COLUMN concurrency_key text,
  -- Rate limit keys by scope ("g:<group>" or "j:<job name>").
  ADD COLUMN rate_keys jsonb,
  -- While a job with this name and key is queued, an enqueue with it replaces the payload and the due time.
  ADD COLUMN debounce_key text,
  -- The concurrency bucket a claim counted this run in; the transition out of running counts it out.
  ADD COLUMN flow_bucket text;

-- Unkeyed jobs are claimed along this index, so keyed ones (held back by a limit or not) never stand in
-- their way. (A 0.1 tick beside this release claims without an index until it is replaced.)
DROP INDEX {{prefix}}queue_dispatch_idx;
CREATE INDEX {{prefix}}queue_dispatch_idx ON {{prefix}}queue (priority DESC, run_at, id) WHERE status = 'queued' AND flow_key IS NULL;
-- Keyed jobs: the claim walks the keys in order (a skip scan) and takes a few due jobs of each.
CREATE INDEX {{prefix}}queue_flow_idx ON {{prefix}}queue (flow_key, priority DESC, run_at, id) WHERE status = 'queued' AND flow_key IS NOT NULL;
CREATE UNIQUE INDEX {{prefix}}queue_debounce_idx ON {{prefix}}queue (job_name, debounce_key) WHERE status = 'queued' AND debounce_key IS NOT NULL;

-- One row per bucket: "c:<job>:<key>" counts the runs of a concurrency limit, "r:<scope>:<key>" keeps
-- the latest starts of a rate limit. The rows are locked by the claim that admits jobs against them.
CREATE TABLE {{prefix}}flow (
  bucket     text PRIMARY KEY,
  running    integer NOT NULL DEFAULT 0,
  starts     timestamptz[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 70);

-- The admission, as one function called inside the claim statement: it sees the latest committed
-- state of every bucket it locks, so no key ever has more runs than its limit, and no window of a
-- rate limit more starts, however many ticks race. Every bucket a statement touches (the runs its
-- settle counts out, p_release, and those it admits against) is locked here, once, in name order,
-- so racing statements cannot deadlock on them. Keys are visited round-robin from p_cursor; at most
-- p_want due jobs are taken of each of at most p_max_keys keys, locked SKIP LOCKED. Returns the
-- admitted jobs and the bucket each run counts in, and one more row (job_id NULL) saying how many
-- due jobs the limits held back, when a rate window frees next, and the key to start after next time.
CREATE FUNCTION {{prefix}}flow_admit(p_limits jsonb, p_want integer, p_cursor text, p_max_keys integer, p_release jsonb)
RETURNS TABLE (job_id uuid, bucket text, next_cursor text, held integer, retry_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  v_keys text[] := '{}';
  v_more text[];
  v_ids uuid[] := '{}';
  v_jobs text[] := '{}';
  v_cbuckets text[] := '{}';
  v_rbuckets jsonb[] := '{}';
  v_keys_of text[] := '{}';
  v_buckets text[];
  v_running jsonb := '{}';
  v_starts jsonb := '{}';
  v_now timestamptz;
  v_admit uuid[] := '{}';
  v_admit_bucket text[] := '{}';
  v_last text := p_cursor;
  v_held integer := 0;
  v_retry timestamptz;
  v_oldest timestamptz;
  v_window interval;
  i integer;
  b text;
  ok boolean;
  rl jsonb;
  n integer;
BEGIN
  IF p_want > 0 THEN
    -- The keys that have queued jobs, in order after the cursor, then from the start.
    v_keys := ARRAY(
      WITH RECURSIVE k(key, n) AS (
        SELECT (SELECT q.flow_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.flow_key > p_cursor
                ORDER BY q.flow_key LIMIT 1), 1
        UNION ALL
        SELECT (SELECT q.flow_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.flow_key > k.key
                ORDER BY q.flow_key LIMIT 1), k.n + 1
        FROM k WHERE k.key IS NOT NULL AND k.n < p_max_keys)
      SELECT key FROM k WHERE key IS NOT NULL);
    IF cardinality(v_keys) < p_max_keys AND p_cursor <> '' THEN
      v_more := ARRAY(
        WITH RECURSIVE k(key, n) AS (
          SELECT (SELECT q.flow_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.flow_key <= p_cursor
                  ORDER BY q.flow_key LIMIT 1), 1
          UNION ALL
          SELECT (SELECT q.flow_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.flow_key > k.key
                  AND q.flow_key <= p_cursor ORDER BY q.flow_key LIMIT 1), k.n + 1
          FROM k WHERE k.key IS NOT NULL AND k.n < p_max_keys - cardinality(v_keys))
        SELECT key FROM k WHERE key IS NOT NULL);
      v_keys := v_keys || v_more;
    END IF;
    -- Due jobs of each key, best first, round-robin: every key's first, then every key's second...
    IF cardinality(v_keys) > 0 THEN
      SELECT coalesce(array_agg(c.id ORDER BY c.rnk, c.kpos), '{}'), coalesce(array_agg(c.job_name ORDER BY c.rnk, c.kpos), '{}'),
             coalesce(array_agg(c.cbucket ORDER BY c.rnk, c.kpos), '{}'), coalesce(array_agg(c.rbuckets ORDER BY c.rnk, c.kpos), '{}'),
             coalesce(array_agg(c.flow_key ORDER BY c.rnk, c.kpos), '{}')
        INTO v_ids, v_jobs, v_cbuckets, v_rbuckets, v_keys_of
      FROM (
        SELECT x.*, row_number() OVER (PARTITION BY x.kpos ORDER BY x.priority DESC, x.run_at, x.id) AS rnk,
               CASE WHEN jsonb_typeof(p_limits -> x.job_name -> 'c') = 'number'
                    THEN 'c:' || x.job_name || ':' || coalesce(x.concurrency_key, '') END AS cbucket,
               coalesce((SELECT jsonb_agg(jsonb_build_object('b', 'r:' || (r ->> 's') || ':' || coalesce(x.rate_keys ->> (r ->> 's'), ''), 'r', r))
                         FROM jsonb_array_elements(coalesce(p_limits -> x.job_name -> 'r', '[]')) r), '[]') AS rbuckets
        FROM unnest(v_keys) WITH ORDINALITY AS k(key, kpos)
        CROSS JOIN LATERAL (
          SELECT q.id, q.job_name, q.flow_key, q.priority, q.run_at, q.concurrency_key, q.rate_keys, k.kpos
          FROM {{prefix}}queue q
          WHERE q.status = 'queued' AND q.flow_key = k.key AND q.run_at <= now()
          ORDER BY q.priority DESC, q.run_at, q.id
          LIMIT p_want
          FOR UPDATE OF q SKIP LOCKED) x) c;
    END IF;
  END IF;

  -- Every bucket this statement touches exists, and is locked, in name order.
  SELECT array_agg(DISTINCT bb ORDER BY bb) INTO v_buckets FROM (
    SELECT unnest(v_cbuckets) AS bb
    UNION ALL SELECT e ->> 'b' FROM unnest(v_rbuckets) rb, jsonb_array_elements(rb) e
    UNION ALL SELECT key FROM jsonb_each(coalesce(p_release, '{}'))) s WHERE bb IS NOT NULL;
  IF v_buckets IS NOT NULL THEN
    INSERT INTO {{prefix}}flow (bucket) SELECT unnest(v_buckets) ORDER BY 1 ON CONFLICT (bucket) DO NOTHING;
    FOR b, n, rl IN
      SELECT f.bucket, f.running, to_jsonb(f.starts) FROM {{prefix}}flow f WHERE f.bucket = ANY (v_buckets) ORDER BY f.bucket FOR UPDATE
    LOOP
      -- The runs the statement's settle ended are counted out first.
      v_running := v_running || jsonb_build_object(b, greatest(0, n - coalesce((p_release ->> b)::int, 0)));
      v_starts := v_starts || jsonb_build_object(b, rl);
    END LOOP;
  END IF;
  -- A start is counted from now, after the locks: never from before waiting for another claim's commit.
  v_now := clock_timestamp();

  -- Admit in round-robin order while every bucket of the job has room.
  FOR i IN 1 .. cardinality(v_ids) LOOP
    EXIT WHEN cardinality(v_admit) >= p_want;
    ok := true;
    IF v_cbuckets[i] IS NOT NULL AND (v_running ->> v_cbuckets[i])::int >= (p_limits -> v_jobs[i] ->> 'c')::int THEN ok := false; END IF;
    IF ok THEN
      FOR rl IN SELECT e FROM jsonb_array_elements(v_rbuckets[i]) e LOOP
        -- Starts within the window (widened by the pad, so start times measured in handlers respect it too).
        v_window := ((rl -> 'r' ->> 'p')::bigint + (rl -> 'r' ->> 'pad')::bigint) * interval '1 millisecond';
        SELECT count(*), min(s::timestamptz) INTO n, v_oldest FROM jsonb_array_elements_text(v_starts -> (rl ->> 'b')) s
          WHERE s::timestamptz > v_now - v_window;
        IF n >= (rl -> 'r' ->> 'l')::int THEN
          ok := false;
          -- The window has room again when its oldest start leaves it.
          v_retry := least(coalesce(v_retry, 'infinity'), v_oldest + v_window);
          EXIT;
        END IF;
      END LOOP;
    END IF;
    IF NOT ok THEN
      v_held := v_held + 1;
      CONTINUE;
    END IF;
    v_admit := v_admit || v_ids[i];
    v_admit_bucket := v_admit_bucket || v_cbuckets[i];
    v_last := v_keys_of[i];
    IF v_cbuckets[i] IS NOT NULL THEN
      v_running := jsonb_set(v_running, ARRAY[v_cbuckets[i]], to_jsonb((v_running ->> v_cbuckets[i])::int + 1));
    END IF;
    FOR rl IN SELECT e FROM jsonb_array_elements(v_rbuckets[i]) e LOOP
      v_starts := jsonb_set(v_starts, ARRAY[rl ->> 'b'], (v_starts -> (rl ->> 'b')) || to_jsonb(v_now));
    END LOOP;
  END LOOP;

  -- Write the buckets back: running counts, and the starts still inside the longest window of each
  -- (at most as many as its largest limit: older ones can no longer decide anything).
  IF v_buckets IS NOT NULL THEN
    UPDATE {{prefix}}flow f SET
      running = (v_running ->> f.bucket)::int,
      starts = CASE WHEN w.span IS NULL THEN '{}' ELSE coalesce((
        SELECT array_agg(s ORDER BY s) FROM (
          SELECT s::timestamptz AS s FROM jsonb_array_elements_text(v_starts -> f.bucket) s
          WHERE s::timestamptz > v_now - w.span * interval '1 millisecond'
          ORDER BY s::timestamptz DESC LIMIT w.cap) kept), '{}') END,
      updated_at = now()
    FROM unnest(v_buckets) AS ub(bucket)
    LEFT JOIN (
      SELECT e ->> 'b' AS bucket, max((e -> 'r' ->> 'p')::bigint + (e -> 'r' ->> 'pad')::bigint) AS span, max((e -> 'r' ->> 'l')::int) AS cap
      FROM unnest(v_rbuckets) rb, jsonb_array_elements(rb) e GROUP BY 1) w ON w.bucket = ub.bucket
    WHERE f.bucket = ub.bucket;
  END IF;

  RETURN QUERY SELECT a.id, a.bucket, v_last, 0, NULL::timestamptz FROM unnest(v_admit, v_admit_bucket) AS a(id, bucket)
    UNION ALL SELECT NULL::uuid, NULL::text, v_last, v_held, v_retry;
END
$fn$;

-- Dead letters keep a job's keys, so a replay obeys the same limits.
ALTER TABLE {{prefix}}dead_letters
  ADD COLUMN flow_key text,
  ADD COLUMN concurrency_key text,
  ADD COLUMN rate_keys jsonb;

-- The stats list the keys with runs now, busiest first, without reading every bucket.
-- Named so that no other prefix's object can have its name: "flow_running_idx" under a prefix P_queue_
-- is "queue_flow_running_idx" (migration 009) under P_, so those two prefixes could not share a database.
-- (Databases migrated before carry the old name, which is harmless there.)
CREATE INDEX {{prefix}}flow_busy_idx ON {{prefix}}flow (running DESC, bucket) WHERE running > 0;
