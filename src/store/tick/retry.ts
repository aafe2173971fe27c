import { clip, FENCE, type FragmentBuilder } from "./fragments.js";

export interface Retry {
  readonly id: string;
  readonly owner: string;
  readonly durationMs: number;
  /** Backoff before the next attempt; the database clock adds it, so hosts' clocks never matter. */
  readonly delayMs: number;
  readonly error: string;
}

/** A failed attempt with attempts left: back to queued after its backoff, lease released. */
export const retryFragment: FragmentBuilder<readonly Retry[]> = (t, p, items) => ({
  ctes: [
    `retried AS (
      UPDATE ${t.queue} q
      SET status = 'queued', run_at = now() + s.delay_ms * interval '1 millisecond',
          lease_owner = NULL, lease_expires_at = NULL, last_error = s.error, updated_at = now()
      FROM jsonb_to_recordset(${p.json(
        items.map((i) => ({ id: i.id, owner: i.owner, duration_ms: i.durationMs, delay_ms: i.delayMs, error: clip(i.error) })),
      )}) AS s(id uuid, owner uuid, duration_ms integer, delay_ms bigint, error text)
      WHERE ${FENCE("q", "s")}
      RETURNING q.id, q.job_name, s.duration_ms, q.flow_bucket)`,
  ],
  outcomes: [{ cte: "retried", outcome: "retried" }],
});
