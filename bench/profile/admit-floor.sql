-- Profiling aid (bench/profile/statement-cpu.ts, never a migration): a flow_admit that admits the first
-- due keyed jobs without looking at any limit, in one statement. Measured beside the real one it gives
-- the floor of the keyed claim: what the claim costs around the admission, whatever the admission does.
CREATE OR REPLACE FUNCTION {{prefix}}flow_admit(p_limits jsonb, p_want integer, p_cursor text, p_max_keys integer, p_release jsonb)
RETURNS TABLE (job_id uuid, bucket text, next_cursor text, held integer, retry_at timestamptz)
LANGUAGE plpgsql VOLATILE ROWS 10 SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
BEGIN
  RETURN QUERY SELECT x.id, 'c:' || x.job_name || ':' || coalesce(x.concurrency_key, ''), ''::text, 0, NULL::timestamptz FROM (
    SELECT q.id, q.job_name, q.concurrency_key FROM {{prefix}}queue q WHERE q.status = 'queued' AND q.flow_key IS NOT NULL AND q.run_at <= now()
    ORDER BY q.flow_key, q.priority DESC, q.run_at, q.id LIMIT p_want FOR UPDATE OF q SKIP LOCKED) x
  UNION ALL SELECT NULL::uuid, NULL::text, '', 0, NULL::timestamptz;
END
$fn$;
