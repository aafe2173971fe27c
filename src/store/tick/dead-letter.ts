import { clip, deadColumns, FENCE, type FragmentBuilder } from "./fragments.js";
import { HISTORY_RECORD, historyColumns, historyFields, type RunHistory } from "./history.js";

import type { DeadReason } from "../../terms.js";

export type { DeadReason } from "../../terms.js";

export interface DeadLetter {
  readonly id: string;
  readonly owner: string;
  readonly durationMs: number;
  readonly error: string;
  readonly reason: DeadReason;
  readonly history?: RunHistory;
}

/** Moves the job from the queue to dead letters; the fence is on the DELETE, so a stale run files nothing. */
export const deadLetterFragment: FragmentBuilder<readonly DeadLetter[]> = (t, p, items) => {
  const input = p.json(
    items.map((i) => ({ id: i.id, owner: i.owner, duration_ms: i.durationMs, error: clip(i.error), reason: i.reason, ...historyFields(i.history) })),
  );
  return {
    ctes: [
      `dead_lettered AS (
        DELETE FROM ${t.queue} q
        USING jsonb_to_recordset(${input}) AS s(id uuid, owner uuid, duration_ms integer, error text, reason text, ${HISTORY_RECORD})
        WHERE ${FENCE("q", "s", input)}
        RETURNING ${deadColumns("q", "s.error", "s.reason", "s.duration_ms")}, ${historyColumns("q", { error: "s.error", s: "s", final: true })})`,
    ],
    deadSources: ["dead_lettered"],
    outcomes: [{ cte: "dead_lettered", outcome: "dead_lettered" }],
  };
};

/** The one insert every dead source of a statement feeds. Its id is the job's id. */
export const deadLetterSink = (table: string, sources: readonly string[]): string =>
  `dead_sink AS (
    INSERT INTO ${table} (id, job_name, payload, attempts, max_attempts, priority, reason, last_error,
                          idempotency_key, correlation_id, created_at, dead_at, flow_key, concurrency_key, rate_keys,
                          replays, traceparent)
    SELECT id, job_name, payload, attempt, max_attempts, priority, dead_reason, dead_error,
           idempotency_key, correlation_id, created_at, now(), flow_key, concurrency_key, rate_keys, replays, traceparent
    FROM (${sources.map((s) => `SELECT * FROM ${s}`).join(" UNION ALL ")}) d
    ON CONFLICT (id) DO UPDATE SET
      job_name = excluded.job_name, payload = excluded.payload, attempts = excluded.attempts,
      max_attempts = excluded.max_attempts, priority = excluded.priority, reason = excluded.reason,
      last_error = excluded.last_error, idempotency_key = excluded.idempotency_key,
      correlation_id = excluded.correlation_id, created_at = excluded.created_at, dead_at = excluded.dead_at,
      flow_key = excluded.flow_key, concurrency_key = excluded.concurrency_key, rate_keys = excluded.rate_keys,
      replays = excluded.replays, traceparent = excluded.traceparent
    RETURNING id)`;
