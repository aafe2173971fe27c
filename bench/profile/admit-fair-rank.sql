-- Profiling aid (bench/profile/admit-rollback.ts, never a migration): what a keyed claim would cost
-- if one index served the keys round-robin, instead of the admission's skip scan over keys and its
-- scan per key. Each job gets a fair rank at enqueue (four jobs of a key per rank), so an index on
-- (fair_rank, flow_key) yields four jobs of each key in turn. It keeps the admission's bucket locks
-- and running counts (what makes its decisions exact), for concurrency limits only, and only where
-- every bucket has room: it raises if a limit would bind.
--   npx tsx bench/profile/admit-rollback.ts 10 bench/profile/admit-fair-rank.sql bench/profile/admit-floor.sql
ALTER TABLE {{prefix}}queue ADD COLUMN fair_rank bigint;
CREATE INDEX {{prefix}}queue_fair_idx ON {{prefix}}queue (fair_rank, flow_key) WHERE status = 'queued' AND flow_key IS NOT NULL;
CREATE FUNCTION {{prefix}}fair_rank_set() RETURNS trigger LANGUAGE plpgsql AS $t$
BEGIN
  NEW.fair_rank := (SELECT count(*) FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key = NEW.flow_key) / 4;
  RETURN NEW;
END
$t$;
CREATE TRIGGER {{prefix}}fair_rank BEFORE INSERT ON {{prefix}}queue FOR EACH ROW EXECUTE FUNCTION {{prefix}}fair_rank_set();
CREATE OR REPLACE FUNCTION {{prefix}}flow_admit(p_limits jsonb, p_want integer, p_cursor text, p_max_keys integer, p_release jsonb)
RETURNS TABLE (job_id uuid, bucket text, next_cursor text, held integer, retry_at timestamptz)
LANGUAGE plpgsql VOLATILE ROWS 10 SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
  v_id uuid[];
  v_cb text[];
  v_cl integer[];
  v_lock text[];
  v_fits boolean;
BEGIN
  SELECT coalesce(array_agg(x.id), '{}'), coalesce(array_agg('c:' || x.job_name || ':' || coalesce(x.concurrency_key, '')), '{}'),
         coalesce(array_agg((p_limits -> x.job_name ->> 'c')::int), '{}')
    INTO v_id, v_cb, v_cl
  FROM (SELECT q.id, q.job_name, q.concurrency_key FROM {{prefix}}queue q
        WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.run_at <= now()
        ORDER BY q.fair_rank, q.flow_key LIMIT p_want FOR UPDATE OF q SKIP LOCKED) x;
  SELECT coalesce(array_agg(l.b), '{}') INTO v_lock FROM (
    SELECT d.b, pg_advisory_xact_lock(hashtext('{{prefix}}flow'), hashtext(d.b)) AS locked
    FROM (SELECT DISTINCT b FROM unnest(v_cb) b) d ORDER BY hashtext(d.b), d.b) l;
  -- After the locks, a statement of its own: a snapshot that sees every claim that held them before.
  SELECT bool_and(rc.n + cc.k <= cc.climit) INTO v_fits
  FROM (SELECT u.b, count(*)::int AS k, max(u.l) AS climit FROM unnest(v_cb, v_cl) u(b, l) GROUP BY u.b) cc
  CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM (
      SELECT 1 FROM {{prefix}}queue q WHERE q.status = 'running' AND q.flow_bucket = cc.b LIMIT cc.climit) r) rc;
  IF NOT coalesce(v_fits, true) THEN RAISE EXCEPTION 'admit-fair-rank measures limits with room; one would bind'; END IF;
  RETURN QUERY SELECT a.id, a.bucket, ''::text, 0, NULL::timestamptz FROM unnest(v_id, v_cb) AS a(id, bucket)
    UNION ALL SELECT NULL::uuid, NULL::text, ''::text, 0, NULL::timestamptz FROM (SELECT set_config('pgtick.claimed_at', '', true)) s;
END
$fn$;
