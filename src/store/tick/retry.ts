import { clip, FENCE, type FragmentBuilder } from "./fragments.js";
import { HISTORY_RECORD, historyColumns, historyFields, type RunHistory } from "./history.js";

export interface Retry {
  readonly id: string;
  readonly owner: string;
  readonly durationMs: number;
  /** Backoff before the next attempt; the database clock adds it, so hosts' clocks never matter. */
  readonly delayMs: number;
  readonly error: string;
  readonly history?: RunHistory;
  /** The platform refused the run what it needed (a Worker's subrequests): the attempt is given back. */
  readonly returned?: boolean;
}

/** A failed attempt with attempts left: back to queued after its backoff, lease released, debounce key given up (it has run). */
export const retryFragment: FragmentBuilder<readonly Retry[]> = (t, p, items) => {
  const input = p.json(
    items.map((i) => ({
      id: i.id, owner: i.owner, duration_ms: i.durationMs, delay_ms: i.delayMs, error: clip(i.error), returned: i.returned === true, ...historyFields(i.history),
    })),
  );
  return {
    ctes: [
      `retried AS (
        UPDATE ${t.queue} q
        SET status = 'queued', run_at = now() + s.delay_ms * interval '1 millisecond', attempt = q.attempt - CASE WHEN s.returned THEN 1 ELSE 0 END,
            lease_owner = NULL, lease_expires_at = NULL, last_error = s.error, updated_at = now(), debounce_key = NULL
        FROM jsonb_to_recordset(${input}) AS s(id uuid, owner uuid, duration_ms integer, delay_ms bigint, error text, returned boolean, ${HISTORY_RECORD})
        WHERE ${FENCE("q", "s", input)}
        RETURNING q.id, q.job_name, s.duration_ms, q.flow_bucket,
          ${historyColumns("q", { error: "s.error", s: "s", attempt: "q.attempt + CASE WHEN s.returned THEN 1 ELSE 0 END" })})`,
    ],
    outcomes: [{ cte: "retried", outcome: "retried" }],
  };
};
