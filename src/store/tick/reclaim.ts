import { deadColumns, type FragmentBuilder } from "./fragments.js";
import { historyColumns } from "./history.js";

const LEASE_EXPIRED_ERROR = "lease expired: the tick running this attempt ended without settling it (killed or timed out)";

/**
 * Leases left behind by a tick that was killed outright: the row goes back to
 * the queue (claimable at once) or, if that was its last attempt, to dead
 * letters, so a job that kills its tick every time cannot loop.
 * Bounded per statement; the next tick takes the rest.
 */
export const reclaimFragment: FragmentBuilder<{ limit: number }> = (t, p, { limit }) => {
  const error = p.add(LEASE_EXPIRED_ERROR);
  return {
    ctes: [
      `expired AS (
        SELECT id, updated_at AS started FROM ${t.queue}
        WHERE status = 'running' AND lease_expires_at < now()
        ORDER BY lease_expires_at LIMIT ${p.add(limit)} FOR UPDATE SKIP LOCKED)`,
      `reclaimed AS (
        UPDATE ${t.queue} q
        SET status = 'queued', run_at = now(), lease_owner = NULL, lease_expires_at = NULL,
            last_error = ${error}::text, updated_at = now(), debounce_key = NULL
        FROM expired e WHERE q.id = e.id AND q.attempt < q.max_attempts
        RETURNING q.id, q.job_name, NULL::integer AS duration_ms, q.flow_bucket, ${historyColumns("q", { error: `${error}::text`, started: "e.started" })})`,
      `reclaim_exhausted AS (
        DELETE FROM ${t.queue} q USING expired e
        WHERE q.id = e.id AND q.attempt >= q.max_attempts
        RETURNING ${deadColumns("q", `${error}::text`, "'lease_expired'::text", "NULL::integer")}, ${historyColumns("q", { error: `${error}::text`, started: "e.started", final: true })})`,
    ],
    deadSources: ["reclaim_exhausted"],
    outcomes: [
      { cte: "reclaimed", outcome: "reclaimed" },
      { cte: "reclaim_exhausted", outcome: "dead_lettered" },
    ],
  };
};
