-- The admission, ninth version: 024's, with the same signature, buckets and results (ticks of the last
-- release call it unchanged during a rolling deploy), and one change: a key whose jobs were held back by
-- a limit that is not its own (a per-user rate under a per-tenant concurrency limit, whose tenant is the
-- key) gives more rows in a later round, once the claim has no new key to look at and no key whose share
-- was all admitted, within the eight rounds a claim makes. Such a key's other jobs may have room: with 11
-- jobs of one user over its rate and a twelfth of another user of the same tenant, a claim of 10 looked at
-- the first 10, held them all, and never reached the twelfth, which waited for the first user's window (an
-- hour). A key held back by its own limit (the tenant at its concurrency) has nothing more to give: it is
-- passed over as before. Until 024's claim would have ended, this one decides as it did.
CREATE OR REPLACE FUNCTION {{prefix}}flow_admit(p_limits jsonb, p_want integer, p_cursor text, p_max_keys integer, p_release jsonb)
RETURNS TABLE (job_id uuid, bucket text, next_cursor text, held integer, retry_at timestamptz)
LANGUAGE plpgsql VOLATILE ROWS 10 SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
#variable_conflict use_column
DECLARE
  -- Rows of the claim a key is first asked for: fewer keys per claim, each a few probes cheaper.
  c_share CONSTANT integer := 4;
  -- Keys in scan order (after the cursor, then from the first up to it), found as rounds need them.
  v_keys text[] := '{}';
  v_after text := p_cursor;
  v_wrapped boolean := false;
  v_scanned boolean := false;
  v_found text[];
  v_n integer;
  v_r integer;
  j_name text[];
  j_cl integer[];
  j_rs text[];
  j_span bigint[];
  j_rl integer[];
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
  n_maxk integer;
  n_rated boolean;
  -- Buckets this claim holds the lock of: state when locked, the count after this statement, new starts.
  v_b text[] := '{}';
  v_lock text[];
  v_run integer[] := '{}';
  v_cnt integer[] := '{}';
  v_first timestamptz[] := '{}';
  v_span bigint[] := '{}';
  v_lim integer[] := '{}';
  v_new integer[] := '{}';
  a_b text[];
  a_run integer[];
  a_cnt integer[];
  a_first timestamptz[];
  a_span bigint[];
  a_lim integer[];
  -- Per key position: rows taken in the round, rows admitted in the round, and whether a row was held
  -- back by a bucket other than the key's own (its later rows may have room).
  k_took integer[];
  k_admit integer[];
  k_other boolean[];
  -- The bucket that held back the candidate being looked at, and the keys that may give more rows once
  -- the claim has no other keys to look at (their jobs held back by a limit not their own).
  v_block text;
  v_other_keys integer[] := '{}';
  v_round_keys integer[] := '{}';
  v_more integer[];
  v_cap integer;
  v_need integer;
  v_yield numeric := c_share;
  v_from integer;
  v_round integer := 0;
  v_pos integer := 0;
  -- The last key (in scan order) a job was admitted of: where the next claim resumes, when there is one.
  v_apos integer := 0;
  -- This claim's rotation of the keys' order after their first rows (see the candidates' ord).
  v_spin integer := floor(random() * 1000000)::int;
  v_now timestamptz;
  -- The instant this claim's starts are written at: after all of its locks.
  v_at timestamptz;
  v_admit uuid[] := '{}';
  -- Candidates of the round the claim can take, whether every bucket has room for its share of them,
  -- and the starts that share adds to each rate bucket.
  v_take integer;
  v_fits boolean;
  a_k integer[];
  v_admit_bucket text[] := '{}';
  v_held integer := 0;
  v_retry timestamptz;
  v_rb integer[];
  i integer;
  j integer;
  ci integer;
  bi integer;
  ok boolean;
BEGIN
  -- Rate limits per job, padded to one width so that a candidate's buckets fit a row of a 2-D array.
  -- (A statement only when some job has more than one: the test is an expression, no statement.)
  -- Each job's limits, read from p_limits once: its concurrency limit, its first rate rule (name,
  -- window with its pad, limit), and the most rules a job has (rate rules are padded to that width).
  SELECT array_agg(l.key), array_agg(CASE WHEN jsonb_typeof(l.value -> 'c') = 'number' THEN (l.value ->> 'c')::int END),
         array_agg(l.value -> 'r' -> 0 ->> 's'), array_agg((l.value -> 'r' -> 0 ->> 'p')::bigint + (l.value -> 'r' -> 0 ->> 'pad')::bigint),
         array_agg((l.value -> 'r' -> 0 ->> 'l')::int),
         greatest(1, coalesce(max(jsonb_array_length(CASE WHEN jsonb_typeof(l.value -> 'r') = 'array' THEN l.value -> 'r' ELSE '[]' END)), 0))
    INTO j_name, j_cl, j_rs, j_span, j_rl, v_r
  FROM jsonb_each(coalesce(p_limits, '{}')) l;
  LOOP
    v_need := p_want - cardinality(v_admit);
    EXIT WHEN v_need <= 0 OR v_round >= 8;
    -- More keys for this round: enough to fill what is left at the yield seen so far, within the bound.
    -- A round that found no due job at all: its keys hold nothing due now; look further at once.
    v_n := least(p_max_keys - cardinality(v_keys),
                 CASE WHEN v_yield = 0 THEN p_max_keys ELSE greatest(0, ceil(v_need / greatest(v_yield, 1))::int - cardinality(v_round_keys)) END);
    IF v_n > 0 AND NOT v_scanned THEN
      v_from := cardinality(v_keys) + 1;
      IF NOT v_wrapped THEN
        v_found := ARRAY(
          WITH RECURSIVE k(key, n) AS (
            SELECT (SELECT q.flow_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.flow_key > v_after
                    ORDER BY q.flow_key LIMIT 1), 1
            UNION ALL
            SELECT (SELECT q.flow_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.flow_key > k.key
                    ORDER BY q.flow_key LIMIT 1), k.n + 1
            FROM k WHERE k.key IS NOT NULL AND k.n < v_n)
          SELECT key FROM k WHERE key IS NOT NULL);
        v_keys := v_keys || v_found;
        IF cardinality(v_found) < v_n THEN
          -- Past the last key: on from the first ('' sorts before every key), up to the cursor.
          v_wrapped := true;
          v_after := '';
          v_n := v_n - cardinality(v_found);
          v_scanned := p_cursor = '';
        ELSE
          v_after := v_found[cardinality(v_found)];
          v_n := 0;
        END IF;
      END IF;
      IF v_n > 0 AND v_wrapped AND NOT v_scanned THEN
        v_found := ARRAY(
          WITH RECURSIVE k(key, n) AS (
            SELECT (SELECT q.flow_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.flow_key > v_after
                    AND q.flow_key <= p_cursor ORDER BY q.flow_key LIMIT 1), 1
            UNION ALL
            SELECT (SELECT q.flow_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.flow_key > k.key
                    AND q.flow_key <= p_cursor ORDER BY q.flow_key LIMIT 1), k.n + 1
            FROM k WHERE k.key IS NOT NULL AND k.n < v_n)
          SELECT key FROM k WHERE key IS NOT NULL);
        v_keys := v_keys || v_found;
        IF cardinality(v_found) < v_n THEN v_scanned := true; ELSE v_after := v_found[cardinality(v_found)]; END IF;
      END IF;
      FOR i IN v_from .. cardinality(v_keys) LOOP v_round_keys := v_round_keys || i; END LOOP;
    END IF;
    -- No new key and none whose share was all admitted: the keys whose jobs another limit held back.
    IF cardinality(v_round_keys) = 0 THEN
      v_round_keys := v_other_keys;
      v_other_keys := '{}';
    END IF;
    EXIT WHEN cardinality(v_round_keys) = 0;
    v_round := v_round + 1;
    v_cap := ceil(v_need::numeric / cardinality(v_round_keys))::int;
    IF v_r = 1 THEN
      -- One rule at most per job, looked up in the arrays read from p_limits; each key's rows ranked as
      -- its scan returns them; one sort for all the aggregates, which read the sorted subquery in its
      -- order (an ORDER BY in each aggregate sorted the rows again for each).
      SELECT coalesce(array_agg(c.id), '{}'), coalesce(array_agg(c.kpos), '{}'), coalesce(array_agg(c.cb), '{}'), coalesce(array_agg(c.cl), '{}'),
             array_agg(ARRAY[c.rn]), array_agg(ARRAY[c.rs]), array_agg(ARRAY[c.rl]), max(c.kpos), coalesce(bool_or(c.rn IS NOT NULL), false)
        INTO n_id, n_kpos, n_cb, n_cl, n_rn, n_rs, n_rl, n_maxk, n_rated
      FROM (
        SELECT x.id, x.kpos,
               CASE WHEN j.cl IS NOT NULL AND x.concurrency_key IS NOT NULL THEN 'c:' || x.job_name || ':' || x.concurrency_key END AS cb, j.cl,
               CASE WHEN j.rs IS NOT NULL THEN 'r:' || j.rs || ':' || coalesce(x.rate_keys ->> j.rs,
                 -- Stored under the scope of another period (the limit's periodMs changed since).
                 (SELECT e.value FROM jsonb_each_text(x.rate_keys) e
                  WHERE regexp_replace(e.key, '[^:]*$', '') = regexp_replace(j.rs, '[^:]*$', '') LIMIT 1)) END AS rn, j.span AS rs, j.rl
        FROM unnest(v_round_keys) AS rk(kpos)
        CROSS JOIN LATERAL (
          SELECT y.*, row_number() OVER () AS rnk FROM (
            SELECT q.id, q.job_name, q.concurrency_key, q.rate_keys, rk.kpos
            FROM {{prefix}}queue q
            WHERE q.status = 'queued' AND q.flow_key = v_keys[rk.kpos] AND q.run_at <= now() AND q.id <> ALL (c_id)
            ORDER BY q.priority DESC, q.run_at, q.id
            LIMIT v_cap
            FOR UPDATE OF q SKIP LOCKED) y) x
        CROSS JOIN LATERAL (SELECT array_position(j_name, x.job_name) AS i) ji
        CROSS JOIN LATERAL (SELECT j_cl[ji.i] AS cl, j_rs[ji.i] AS rs, j_span[ji.i] AS span, j_rl[ji.i] AS rl) j
        ORDER BY x.rnk, CASE WHEN x.rnk = 1 THEN 0 ELSE (x.kpos + v_spin) % greatest(cardinality(v_keys), 1) END, x.kpos) c;
    ELSE
      -- Jobs of several rate rules: each candidate's rules padded to the widest.
      SELECT coalesce(array_agg(c.id ORDER BY c.rnk, c.ord, c.kpos), '{}'), coalesce(array_agg(c.kpos ORDER BY c.rnk, c.ord, c.kpos), '{}'),
             coalesce(array_agg(c.cb ORDER BY c.rnk, c.ord, c.kpos), '{}'), coalesce(array_agg(c.cl ORDER BY c.rnk, c.ord, c.kpos), '{}'),
             array_agg(c.rn ORDER BY c.rnk, c.ord, c.kpos), array_agg(c.rs ORDER BY c.rnk, c.ord, c.kpos), array_agg(c.rl ORDER BY c.rnk, c.ord, c.kpos),
             max(c.kpos), coalesce(bool_or(cardinality(array_remove(c.rn, NULL)) > 0), false)
        INTO n_id, n_kpos, n_cb, n_cl, n_rn, n_rs, n_rl, n_maxk, n_rated
      FROM (
        SELECT x.id, x.kpos, row_number() OVER (PARTITION BY x.kpos ORDER BY x.priority DESC, x.run_at, x.id) AS rnk,
               -- Each key's first row comes in key order (the keys a claim serves are those from the cursor on);
               -- its later rows in an order rotated by a random offset, so that when the claim runs out within a
               -- rank (its size not a multiple of its keys), which keys get the row fewer changes from claim to claim.
               CASE WHEN row_number() OVER (PARTITION BY x.kpos ORDER BY x.priority DESC, x.run_at, x.id) = 1 THEN 0
                    ELSE (x.kpos + v_spin) % greatest(cardinality(v_keys), 1) END AS ord,
               CASE WHEN jsonb_typeof(p_limits -> x.job_name -> 'c') = 'number' AND x.concurrency_key IS NOT NULL
                    THEN 'c:' || x.job_name || ':' || x.concurrency_key END AS cb,
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
        CROSS JOIN LATERAL (SELECT CASE WHEN jsonb_typeof(p_limits -> x.job_name -> 'r') = 'array' THEN p_limits -> x.job_name -> 'r' END AS rules) rr
        -- A candidate's rate buckets, periods and limits, one per rule (NULL past the job's own rules).
        CROSS JOIN LATERAL (SELECT
            ARRAY(SELECT 'r:' || (rr.rules -> g ->> 's') || ':' || coalesce(x.rate_keys ->> (rr.rules -> g ->> 's'),
                    (SELECT e.value FROM jsonb_each_text(x.rate_keys) e
                     WHERE regexp_replace(e.key, '[^:]*$', '') = regexp_replace(rr.rules -> g ->> 's', '[^:]*$', '')
                       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(rr.rules) o WHERE o ->> 's' = e.key) LIMIT 1))
                  FROM generate_series(0, v_r - 1) g ORDER BY g) AS rn,
            ARRAY(SELECT (rr.rules -> g ->> 'p')::bigint + (rr.rules -> g ->> 'pad')::bigint FROM generate_series(0, v_r - 1) g ORDER BY g) AS rs,
            ARRAY(SELECT (rr.rules -> g ->> 'l')::int FROM generate_series(0, v_r - 1) g ORDER BY g) AS rl) r) c;
    END IF;
    v_from := cardinality(c_id) + 1;
    c_id := c_id || n_id;
    c_kpos := c_kpos || n_kpos;
    c_cb := c_cb || n_cb;
    c_cl := c_cl || n_cl;
    c_rn := CASE WHEN c_rn IS NULL THEN n_rn WHEN n_rn IS NULL THEN c_rn ELSE c_rn || n_rn END;
    c_rs := CASE WHEN c_rs IS NULL THEN n_rs WHEN n_rs IS NULL THEN c_rs ELSE c_rs || n_rs END;
    c_rl := CASE WHEN c_rl IS NULL THEN n_rl WHEN n_rl IS NULL THEN c_rl ELSE c_rl || n_rl END;
    -- The round's buckets not yet held, each under a transaction-scoped advisory lock before anything
    -- is counted. The first round waits for its locks, all taken in one order by every claim; later
    -- rounds only try theirs. Only this function writes rate windows, always under these locks, so
    -- their rows need no row locks.
    -- The buckets met for the first time, locked in the statement that lists them (every statement
    -- of this function is a good part of its cost): the first round's in hash order, row by row (a
    -- volatile call in a sorted subquery's list runs after the sort), later rounds' only tried.
    IF v_round = 1 THEN
      SELECT coalesce(array_agg(l.b), '{}') INTO v_lock FROM (
        SELECT d.b, pg_advisory_xact_lock(hashtext('{{prefix}}flow'), hashtext(d.b)) AS locked
        FROM (SELECT DISTINCT b FROM (SELECT unnest(n_cb) UNION ALL SELECT unnest(n_rn)) s(b) WHERE b IS NOT NULL AND b <> ALL (v_b)) d
        ORDER BY hashtext(d.b), d.b) l;
    ELSE
      v_lock := ARRAY(SELECT d.b FROM (SELECT DISTINCT b FROM (SELECT unnest(n_cb) UNION ALL SELECT unnest(n_rn)) s(b) WHERE b IS NOT NULL AND b <> ALL (v_b)) d
                      WHERE pg_try_advisory_xact_lock(hashtext('{{prefix}}flow'), hashtext(d.b)));
    END IF;
    v_take := least(v_need, cardinality(n_id));
    v_fits := cardinality(v_lock) = 0;
    IF cardinality(v_lock) > 0 THEN
      -- After this round's locks: the instant its buckets' windows are counted at.
      v_now := clock_timestamp();
      -- Per bucket also how many of the round's first v_take candidates count in it (the rate rules are
      -- v_r per candidate, row by row), and whether all of them fit: then the loop below would admit
      -- every one of them, in order.
      IF NOT n_rated THEN
        -- Concurrency buckets only: their running jobs, no windows.
        SELECT array_agg(ub.name), array_agg(coalesce(rc.n, 0)), array_agg(0), array_agg(NULL::timestamptz), array_agg(NULL::bigint), array_agg(NULL::int),
               array_agg(0), bool_and(cc.climit IS NULL OR coalesce(rc.n, 0) + cc.k <= cc.climit)
          INTO a_b, a_run, a_cnt, a_first, a_span, a_lim, a_k, v_fits
        FROM unnest(v_lock) ub(name)
        LEFT JOIN (SELECT u.n, max(u.l) AS climit, count(*) FILTER (WHERE u.o <= v_take)::int AS k
                   FROM unnest(n_cb, n_cl) WITH ORDINALITY AS u(n, l, o) WHERE u.n IS NOT NULL GROUP BY u.n) cc ON cc.n = ub.name
        LEFT JOIN LATERAL (SELECT count(*)::int AS n FROM (
            SELECT 1 FROM {{prefix}}queue q WHERE cc.climit IS NOT NULL AND q.status = 'running' AND q.flow_bucket = ub.name LIMIT cc.climit) r) rc ON true;
      ELSE
        SELECT array_agg(ub.name), array_agg(coalesce(rc.n, 0)), array_agg(coalesce(st.cnt, 0)), array_agg(st.first), array_agg(w.span), array_agg(w.lim),
               array_agg(coalesce(w.k, 0)),
               bool_and((cc.climit IS NULL OR coalesce(rc.n, 0) + cc.k <= cc.climit) AND (w.lim IS NULL OR coalesce(st.cnt, 0) + w.k <= w.lim))
          INTO a_b, a_run, a_cnt, a_first, a_span, a_lim, a_k, v_fits
        FROM unnest(v_lock) ub(name)
        LEFT JOIN (SELECT u.n, max(u.l) AS climit, count(*) FILTER (WHERE u.o <= v_take)::int AS k
                   FROM unnest(n_cb, n_cl) WITH ORDINALITY AS u(n, l, o) WHERE u.n IS NOT NULL GROUP BY u.n) cc ON cc.n = ub.name
        LEFT JOIN (SELECT u.n, max(u.s) AS span, max(u.l) AS lim, count(*) FILTER (WHERE (u.o - 1) / v_r + 1 <= v_take)::int AS k
                   FROM unnest(n_rn, n_rs, n_rl) WITH ORDINALITY AS u(n, s, l, o) WHERE u.n IS NOT NULL GROUP BY u.n) w
          ON w.n = ub.name
        -- One primary-key probe per bucket (LIMIT keeps it a probe), and the window found by binary
        -- search in the ordered starts: the starts after the cut.
        LEFT JOIN LATERAL (SELECT cardinality(f.starts) - k.cut AS cnt, f.starts[k.cut + 1] AS first
                           FROM {{prefix}}flow f CROSS JOIN LATERAL (SELECT width_bucket(v_now - w.span * interval '1 millisecond', f.starts) AS cut) k
                           WHERE w.n IS NOT NULL AND f.bucket = ub.name LIMIT 1) st ON true
        LEFT JOIN LATERAL (SELECT count(*)::int AS n FROM (
            SELECT 1 FROM {{prefix}}queue q WHERE cc.climit IS NOT NULL AND q.status = 'running' AND q.flow_bucket = ub.name LIMIT cc.climit) r) rc ON true;
      END IF;
      IF a_b IS NOT NULL THEN
        v_b := v_b || a_b;
        v_run := v_run || a_run;
        v_cnt := v_cnt || a_cnt;
        v_first := v_first || a_first;
        v_span := v_span || a_span;
        v_lim := v_lim || a_lim;
        v_new := v_new || array_fill(0, ARRAY[cardinality(a_b)]);
      END IF;
    END IF;
    -- The common case of limits with room: the first round's candidates fill the claim and every bucket
    -- (all locked, as the first round waits for its locks) has room for all of its share. The loop would
    -- admit each of them in order; take them at once, with the rate windows' new starts.
    IF v_round = 1 AND v_fits AND v_take = v_need THEN
      v_admit := c_id[1:v_take];
      v_admit_bucket := c_cb[1:v_take];
      IF v_take = cardinality(n_id) THEN
        v_pos := greatest(v_pos, n_maxk);
      ELSE
        v_pos := greatest(v_pos, (SELECT max(k) FROM unnest(c_kpos[1:v_take]) k));
      END IF;
      v_apos := v_pos;
      IF a_b IS NOT NULL THEN v_new := a_k; END IF;
      EXIT;
    END IF;
    k_took := array_fill(0, ARRAY[greatest(cardinality(v_keys), 1)]);
    k_admit := k_took;
    k_other := array_fill(false, ARRAY[greatest(cardinality(v_keys), 1)]);
    FOR i IN v_from .. cardinality(c_id) LOOP
      EXIT WHEN cardinality(v_admit) >= p_want;
      k_took[c_kpos[i]] := k_took[c_kpos[i]] + 1;
      v_pos := greatest(v_pos, c_kpos[i]);
      ok := true;
      ci := NULL;
      IF c_cb[i] IS NOT NULL THEN
        ci := array_position(v_b, c_cb[i]);
        -- A bucket another claim holds: the job waits for a later claim.
        IF ci IS NULL THEN CONTINUE; END IF;
        IF v_run[ci] >= c_cl[i] THEN ok := false; v_block := c_cb[i]; END IF;
      END IF;
      v_rb := '{}';
      IF ok THEN
        FOR j IN 1 .. v_r LOOP
          -- No key for this rule (past the job's rules, or a rule added since the job was enqueued): nothing to count.
          CONTINUE WHEN c_rn[i][j] IS NULL;
          bi := array_position(v_b, c_rn[i][j]);
          IF bi IS NULL THEN ok := NULL; EXIT; END IF;
          IF v_cnt[bi] + v_new[bi] >= v_lim[bi] THEN
            ok := false;
            v_block := c_rn[i][j];
            v_retry := least(coalesce(v_retry, 'infinity'), coalesce(v_first[bi], v_now) + v_span[bi] * interval '1 millisecond');
            EXIT;
          END IF;
          v_rb := v_rb || bi;
        END LOOP;
      END IF;
      CONTINUE WHEN ok IS NULL;
      IF NOT ok THEN
        v_held := v_held + 1;
        IF v_block IS DISTINCT FROM v_keys[c_kpos[i]] THEN k_other[c_kpos[i]] := true; END IF;
        CONTINUE;
      END IF;
      k_admit[c_kpos[i]] := k_admit[c_kpos[i]] + 1;
      v_apos := greatest(v_apos, c_kpos[i]);
      v_admit := v_admit || c_id[i];
      v_admit_bucket := v_admit_bucket || c_cb[i];
      IF ci IS NOT NULL THEN v_run[ci] := v_run[ci] + 1; END IF;
      FOREACH bi IN ARRAY v_rb LOOP v_new[bi] := v_new[bi] + 1; END LOOP;
    END LOOP;
    -- A claim that is full is done (no statement more for the next round's keys).
    EXIT WHEN cardinality(v_admit) >= p_want;
    -- A round that admitted less than wanted looked at all its keys: the next claim starts after them.
    v_pos := greatest(v_pos, (SELECT max(k) FROM unnest(v_round_keys) k));
    -- The next round asks more of the keys that gave their whole share and had it all admitted, and
    -- of new keys at the rows per key this round yielded; keys that gave their whole share and had rows
    -- held back by a limit not their own wait until there are no such keys (so they never take a new
    -- key's place, and a claim admits at least what 024's did).
    v_yield := (cardinality(c_id) - v_from + 1)::numeric / cardinality(v_round_keys);
    v_other_keys := ARRAY(SELECT DISTINCT k FROM unnest(v_other_keys || ARRAY(
      SELECT k FROM unnest(v_round_keys) k WHERE k_took[k] = v_cap AND k_admit[k] < v_cap AND k_other[k])) k ORDER BY k);
    v_round_keys := ARRAY(SELECT k FROM unnest(v_round_keys) k WHERE k_took[k] = v_cap AND k_admit[k] = v_cap);
  END LOOP;
  -- Short of what was wanted with keys left unexamined: reported as held, so that the tick claims again
  -- rather than taking the queue for empty. Before the end of the keys, at once: the keys not looked at
  -- may be free now, whenever the windows of those looked at reopen. A claim that went past the end has
  -- seen the rest of the keys since the cursor, and the tick waits as those windows say (or polls at its
  -- interval, for keys held by runs); its successor starts where this one stops.
  IF cardinality(v_admit) < p_want AND NOT v_scanned AND (cardinality(v_keys) >= p_max_keys OR v_round >= 8) THEN
    v_held := v_held + 1;
    IF NOT v_wrapped THEN v_retry := clock_timestamp(); END IF;
  END IF;
  -- Only rate buckets gain starts; a claim under concurrency limits alone writes nothing here.
  IF 0 < ANY (v_new) THEN
    v_at := clock_timestamp();
    -- Starts are kept in order: the window is the last `cnt` of them (counted above), and the
    -- admission kept cnt + nw within the limit, so they and the new ones are all that is kept.
    -- A bucket's first starts create its row.
    INSERT INTO {{prefix}}flow AS f (bucket, starts, updated_at)
    SELECT u.bucket, coalesce(o.starts[cardinality(o.starts) - u.cnt + 1 : cardinality(o.starts)], '{}') || array_fill(v_at, ARRAY[u.nw]), now()
    FROM unnest(v_b, v_new, v_span, v_cnt) AS u(bucket, nw, span, cnt)
    LEFT JOIN LATERAL (SELECT prev.starts FROM {{prefix}}flow prev WHERE prev.bucket = u.bucket LIMIT 1) o ON true
    WHERE u.nw > 0 AND u.span IS NOT NULL
    ORDER BY u.bucket
    ON CONFLICT (bucket) DO UPDATE SET starts = EXCLUDED.starts, updated_at = EXCLUDED.updated_at;
  END IF;
  -- Resume after the last key admitted of; with none, after every key looked at.
  IF v_apos > 0 THEN v_pos := v_apos; END IF;
  RETURN QUERY SELECT a.id, a.bucket, coalesce(v_keys[v_pos], p_cursor), 0, NULL::timestamptz FROM unnest(v_admit, v_admit_bucket) AS a(id, bucket)
    UNION ALL SELECT NULL::uuid, NULL::text, coalesce(v_keys[v_pos], p_cursor), v_held, v_retry
    FROM (SELECT set_config('pgtick.claimed_at', coalesce(v_at::text, ''), true)) s;
END
$fn$;
