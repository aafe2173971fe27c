-- The admission, second version: the same signature, buckets and results as 006's (ticks of the
-- last release call it unchanged during a rolling deploy), at a cost that follows the claim's size:
-- * each key first gives its share of the claim, ceil(want / keys) rows, instead of `want` rows
--   each; keys whose share was all admitted give more in further rounds while slots are left;
-- * a concurrency bucket is no longer a counter row written at every start and every end: the
--   claim takes an advisory lock per bucket (in one order) and counts the bucket's running jobs
--   along a partial index, so a run that ends leaves the count by leaving 'running', with
--   nothing to write (p_release, the runs a statement settled, is no longer needed and ignored;
--   flow.running, which ticks of the last release still decrement, is no longer read);
-- * rate buckets keep their recent starts in flow rows, under the same advisory locks (no row
--   locks); a window is counted once per bucket, a decision is a few array reads instead of jsonb
--   lookups and copies, and a bucket is written only when it gained starts;
-- * the round-robin cursor also passes keys whose jobs were all held, so more held keys than one
--   claim looks at cannot keep the keys behind them waiting.
-- Later rounds admit only jobs whose buckets the first round locked.
CREATE INDEX {{prefix}}queue_flow_running_idx ON {{prefix}}queue (flow_bucket) WHERE status = 'running' AND flow_bucket IS NOT NULL;

CREATE OR REPLACE FUNCTION {{prefix}}flow_admit(p_limits jsonb, p_want integer, p_cursor text, p_max_keys integer, p_release jsonb)
RETURNS TABLE (job_id uuid, bucket text, next_cursor text, held integer, retry_at timestamptz)
LANGUAGE plpgsql VOLATILE ROWS 10 SET plan_cache_mode = force_generic_plan AS $fn$
#variable_conflict use_column
DECLARE
  v_keys text[] := '{}';
  v_more text[];
  v_r integer;
  -- Candidates, in admission order: round by round, key by key.
  c_id uuid[] := '{}';
  c_kpos integer[] := '{}';
  c_cb text[] := '{}';
  c_cl integer[] := '{}';
  c_rn text[];
  c_rs bigint[];
  c_rl integer[];
  n_id uuid[];
  n_kpos integer[];
  n_cb text[];
  n_cl integer[];
  n_rn text[];
  n_rs bigint[];
  n_rl integer[];
  -- Buckets, in name order: locked state, the count after this statement, new starts.
  v_b text[];
  v_rbk text[];
  h integer;
  v_run integer[];
  v_cnt integer[];
  v_first timestamptz[];
  v_span bigint[];
  v_lim integer[];
  v_new integer[];
  -- Per key position: rows taken in the round, rows admitted in the round.
  k_took integer[];
  k_admit integer[];
  v_round_keys integer[];
  v_cap integer;
  v_from integer := 1;
  v_round integer := 0;
  v_now timestamptz;
  v_admit uuid[] := '{}';
  v_admit_bucket text[] := '{}';
  v_last text := p_cursor;
  v_held integer := 0;
  v_retry timestamptz;
  v_rb integer[];
  i integer;
  j integer;
  ci integer;
  bi integer;
  ok boolean;
BEGIN
  IF p_want > 0 THEN
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
  END IF;
  -- Rate limits per job, padded to one width so that a candidate's buckets fit a row of a 2-D array.
  SELECT greatest(1, coalesce(max(jsonb_array_length(CASE WHEN jsonb_typeof(l.value -> 'r') = 'array' THEN l.value -> 'r' ELSE '[]' END)), 0))
    INTO v_r FROM jsonb_each(coalesce(p_limits, '{}')) l;
  v_round_keys := ARRAY(SELECT generate_series(1, cardinality(v_keys)));
  v_cap := CASE WHEN cardinality(v_keys) > 0 THEN ceil(p_want::numeric / cardinality(v_keys))::int ELSE 0 END;
  k_took := array_fill(0, ARRAY[greatest(cardinality(v_keys), 1)]);
  k_admit := k_took;
  LOOP
    EXIT WHEN cardinality(v_admit) >= p_want OR cardinality(v_round_keys) = 0 OR v_cap <= 0 OR v_round >= 8;
    v_round := v_round + 1;
    SELECT coalesce(array_agg(c.id ORDER BY c.rnk, c.kpos), '{}'), coalesce(array_agg(c.kpos ORDER BY c.rnk, c.kpos), '{}'),
           coalesce(array_agg(c.cb ORDER BY c.rnk, c.kpos), '{}'), coalesce(array_agg(c.cl ORDER BY c.rnk, c.kpos), '{}'),
           array_agg(c.rn ORDER BY c.rnk, c.kpos), array_agg(c.rs ORDER BY c.rnk, c.kpos), array_agg(c.rl ORDER BY c.rnk, c.kpos)
      INTO n_id, n_kpos, n_cb, n_cl, n_rn, n_rs, n_rl
    FROM (
      SELECT x.id, x.kpos, row_number() OVER (PARTITION BY x.kpos ORDER BY x.priority DESC, x.run_at, x.id) AS rnk,
             CASE WHEN jsonb_typeof(p_limits -> x.job_name -> 'c') = 'number'
                  THEN 'c:' || x.job_name || ':' || coalesce(x.concurrency_key, '') END AS cb,
             CASE WHEN jsonb_typeof(p_limits -> x.job_name -> 'c') = 'number' THEN (p_limits -> x.job_name ->> 'c')::int END AS cl,
             r.rn, r.rs, r.rl
      FROM unnest(v_round_keys) AS rk(kpos)
      CROSS JOIN LATERAL (
        SELECT q.id, q.job_name, q.priority, q.run_at, q.concurrency_key, q.rate_keys, rk.kpos
        FROM {{prefix}}queue q
        WHERE q.status = 'queued' AND q.flow_key = v_keys[rk.kpos] AND q.run_at <= now() AND q.id <> ALL (c_id)
        ORDER BY q.priority DESC, q.run_at, q.id
        LIMIT v_cap
        FOR UPDATE OF q SKIP LOCKED) x
      CROSS JOIN LATERAL (
        SELECT array_agg(CASE WHEN e IS NOT NULL THEN 'r:' || (e ->> 's') || ':' || coalesce(x.rate_keys ->> (e ->> 's'), '') END ORDER BY g) AS rn,
               array_agg((e ->> 'p')::bigint + (e ->> 'pad')::bigint ORDER BY g) AS rs,
               array_agg((e ->> 'l')::int ORDER BY g) AS rl
        FROM generate_series(0, v_r - 1) g
        CROSS JOIN LATERAL (SELECT CASE WHEN jsonb_typeof(p_limits -> x.job_name -> 'r') = 'array' THEN p_limits -> x.job_name -> 'r' -> g END AS e) z) r) c;
    EXIT WHEN cardinality(n_id) = 0;
    v_from := cardinality(c_id) + 1;
    c_id := c_id || n_id;
    c_kpos := c_kpos || n_kpos;
    c_cb := c_cb || n_cb;
    c_cl := c_cl || n_cl;
    c_rn := CASE WHEN c_rn IS NULL THEN n_rn ELSE c_rn || n_rn END;
    c_rs := CASE WHEN c_rs IS NULL THEN n_rs ELSE c_rs || n_rs END;
    c_rl := CASE WHEN c_rl IS NULL THEN n_rl ELSE c_rl || n_rl END;
    IF v_round = 1 THEN
      -- Every bucket a candidate counts in gets a transaction-scoped advisory lock, all taken in one
      -- order by every claim (so claims cannot deadlock), before anything is counted. Only this
      -- function writes rate windows, always under these locks, so their rows need no row locks.
      SELECT array_agg(DISTINCT rb ORDER BY rb) INTO v_rbk FROM unnest(c_rn) rb WHERE rb IS NOT NULL;
      FOR h IN SELECT DISTINCT hashtext(b) FROM (SELECT unnest(c_cb) UNION ALL SELECT unnest(v_rbk)) s(b) WHERE b IS NOT NULL ORDER BY 1 LOOP
        PERFORM pg_advisory_xact_lock(hashtext('{{prefix}}flow'), h);
      END LOOP;
      v_now := clock_timestamp();
      SELECT array_agg(ub.name ORDER BY ub.name), array_agg(coalesce(rc.n, 0) ORDER BY ub.name),
             array_agg(coalesce(st.cnt, 0) ORDER BY ub.name), array_agg(st.first ORDER BY ub.name),
             array_agg(w.span ORDER BY ub.name), array_agg(w.lim ORDER BY ub.name)
        INTO v_b, v_run, v_cnt, v_first, v_span, v_lim
      FROM (SELECT u.n AS name, max(u.l) AS climit FROM unnest(c_cb, c_cl) AS u(n, l) WHERE u.n IS NOT NULL GROUP BY u.n
            UNION ALL SELECT rb, NULL FROM unnest(v_rbk) rb) ub
      LEFT JOIN (SELECT u.n, max(u.s) AS span, max(u.l) AS lim FROM unnest(c_rn, c_rs, c_rl) AS u(n, s, l) WHERE u.n IS NOT NULL GROUP BY u.n) w
        ON w.n = ub.name
      LEFT JOIN {{prefix}}flow f ON f.bucket = ub.name AND w.n IS NOT NULL
      LEFT JOIN LATERAL (SELECT count(*)::int AS n FROM (
          SELECT 1 FROM {{prefix}}queue q WHERE ub.climit IS NOT NULL AND q.status = 'running' AND q.flow_bucket = ub.name LIMIT ub.climit) r) rc ON true
      LEFT JOIN LATERAL (SELECT count(*)::int AS cnt, min(s) AS first FROM unnest(f.starts) s
                         WHERE w.span IS NOT NULL AND s > v_now - w.span * interval '1 millisecond') st ON true;
      v_new := array_fill(0, ARRAY[greatest(cardinality(v_b), 1)]);
    END IF;
    FOR i IN v_from .. cardinality(c_id) LOOP
      EXIT WHEN cardinality(v_admit) >= p_want;
      k_took[c_kpos[i]] := k_took[c_kpos[i]] + 1;
      -- The cursor follows the first round: the later ones only give more to keys it already passed.
      IF v_round = 1 THEN v_last := v_keys[c_kpos[i]]; END IF;
      ok := true;
      ci := NULL;
      IF c_cb[i] IS NOT NULL THEN
        ci := array_position(v_b, c_cb[i]);
        -- A bucket first seen in a later round is not locked: the job waits for another claim.
        IF ci IS NULL THEN CONTINUE; END IF;
        IF v_run[ci] >= c_cl[i] THEN ok := false; END IF;
      END IF;
      v_rb := '{}';
      IF ok THEN
        FOR j IN 1 .. v_r LOOP
          EXIT WHEN c_rn[i][j] IS NULL;
          bi := array_position(v_b, c_rn[i][j]);
          IF bi IS NULL THEN ok := NULL; EXIT; END IF;
          IF v_cnt[bi] + v_new[bi] >= v_lim[bi] THEN
            ok := false;
            v_retry := least(coalesce(v_retry, 'infinity'), coalesce(v_first[bi], v_now) + v_span[bi] * interval '1 millisecond');
            EXIT;
          END IF;
          v_rb := v_rb || bi;
        END LOOP;
      END IF;
      CONTINUE WHEN ok IS NULL;
      IF NOT ok THEN
        v_held := v_held + 1;
        CONTINUE;
      END IF;
      k_admit[c_kpos[i]] := k_admit[c_kpos[i]] + 1;
      v_admit := v_admit || c_id[i];
      v_admit_bucket := v_admit_bucket || c_cb[i];
      IF ci IS NOT NULL THEN v_run[ci] := v_run[ci] + 1; END IF;
      FOREACH bi IN ARRAY v_rb LOOP v_new[bi] := v_new[bi] + 1; END LOOP;
    END LOOP;
    -- A first round that admitted less than wanted looked at every key it found: the next claim starts after them all.
    IF v_round = 1 AND cardinality(v_admit) < p_want THEN v_last := v_keys[cardinality(v_keys)]; END IF;
    -- The next round asks more of the keys that gave their whole share and had it all admitted.
    v_round_keys := ARRAY(SELECT k FROM generate_series(1, cardinality(v_keys)) k WHERE k_took[k] = v_cap AND k_admit[k] = v_cap);
    k_took := array_fill(0, ARRAY[greatest(cardinality(v_keys), 1)]);
    k_admit := k_took;
    IF cardinality(v_round_keys) > 0 THEN
      v_cap := ceil((p_want - cardinality(v_admit))::numeric / cardinality(v_round_keys))::int;
    END IF;
  END LOOP;
  -- Short of what was wanted with keys left unexamined: reported as held, so that the tick claims again
  -- (at its claim interval) rather than taking the queue for empty.
  IF cardinality(v_admit) < p_want AND cardinality(v_keys) >= p_max_keys THEN v_held := v_held + 1; END IF;
  IF v_b IS NOT NULL THEN
    -- Starts are kept in order: the window is the last `cnt` of them (counted above), and the
    -- admission kept cnt + nw within the limit, so they and the new ones are all that is kept.
    -- A bucket's first starts create its row.
    INSERT INTO {{prefix}}flow AS f (bucket, starts, updated_at)
    SELECT u.bucket, coalesce(o.starts[cardinality(o.starts) - u.cnt + 1 : cardinality(o.starts)], '{}') || array_fill(v_now, ARRAY[u.nw]), now()
    FROM unnest(v_b, v_new, v_span, v_cnt) AS u(bucket, nw, span, cnt)
    LEFT JOIN {{prefix}}flow o ON o.bucket = u.bucket
    WHERE u.nw > 0 AND u.span IS NOT NULL
    ORDER BY u.bucket
    ON CONFLICT (bucket) DO UPDATE SET starts = EXCLUDED.starts, updated_at = EXCLUDED.updated_at;
  END IF;
  RETURN QUERY SELECT a.id, a.bucket, v_last, 0, NULL::timestamptz FROM unnest(v_admit, v_admit_bucket) AS a(id, bucket)
    UNION ALL SELECT NULL::uuid, NULL::text, v_last, v_held, v_retry;
END
$fn$;
